package connector

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/javaprops"
)

// ConfigFromProperties builds a Config from Kafka consumer properties,
// starting from DefaultConfig. Values are trimmed as Kafka trims them. As
// in Kafka, rebalance.backoff.ms defaults to zookeeper.sync.time.ms when
// only the latter is given.
//
// Keys that the old consumer does not know produce a warning, as Kafka's
// VerifiableProperties.verify logs "Property ... is not valid"; keys
// starting with "external" are exempt, as in Kafka. A warning is also given
// for an explicit zero or empty value of a key whose default follows another
// key (client.id, consumer.id, zookeeper.connection.timeout.ms,
// group.instance.id): zkconsumer treats it as unset. Warnings are sorted.
//
// Every problem is reported at once: a value that does not parse (a
// non-numeric number, a boolean other than exactly "true" or "false") and
// every error Validate finds in the result (a missing group.id, a value out
// of range, ...), one *ConfigError per key, joined; all of them match
// ErrInvalidConfig. On error the Config holds every value that did parse.
// The Config itself is not validated (the fields that follow others are
// still unset), so callers may adjust it; the connector's constructor
// calls Validate.
func ConfigFromProperties(props map[string]string) (Config, []string, error) {
	c := DefaultConfig()
	var warnings []string
	var errs []error
	failed := map[string]bool{}
	known := make(map[string]bool, len(properties))
	for _, p := range properties {
		known[p.key] = true
		raw, ok := props[p.key]
		if !ok {
			continue
		}
		value := javaTrim(raw)
		if reason := p.set(&c, value); reason != "" {
			errs = append(errs, &ConfigError{Key: p.key, Value: value, Reason: reason})
			failed[p.key] = true
			continue
		}
		if _, set := p.get(&c); p.derived && !set {
			warnings = append(warnings, fmt.Sprintf("connector: property %s=%q is treated as unset, so its default applies", p.key, value))
		}
	}
	_, backoff := props[keyRebalanceBackoff]
	if _, sync := props[keyZooKeeperSyncTime]; sync && !backoff && !failed[keyZooKeeperSyncTime] {
		c.RebalanceBackoff = c.ZooKeeperSyncTime
	}
	for _, key := range securityKeys() {
		known[key] = true
	}
	for _, err := range setSecurityProperties(&c.Security, props) {
		var ce *ConfigError
		if errors.As(err, &ce) {
			failed[ce.Key] = true
		}
		errs = append(errs, err)
	}
	// Validation in the same round, on a copy; a key whose value did not
	// parse is reported once.
	check := c
	for _, err := range flattenErrors(check.Validate()) {
		var ce *ConfigError
		if errors.As(err, &ce) && failed[ce.Key] {
			continue
		}
		errs = append(errs, err)
	}
	for _, key := range c.ignoredKeys(func(key string) bool { _, ok := props[key]; return ok }) {
		warnings = append(warnings, c.ignoredKeyWarning(key))
	}
	for key := range props {
		if known[key] || strings.HasPrefix(key, "external") {
			continue
		}
		w := fmt.Sprintf("connector: property %s is not valid for the ZooKeeper-based consumer and is ignored", key)
		if hint, ok := renamedKeys[key]; ok {
			w += " (" + hint + ")"
		}
		warnings = append(warnings, w)
	}
	slices.Sort(warnings)
	return c, warnings, errors.Join(errs...)
}

// Properties returns the configuration as Kafka consumer properties, one
// key per field except Logger, Metrics, Security's settings that have no
// key (such as its TokenProvider), and the fields the chosen
// GroupCoordination ignores (see ModeWarnings). It contains Security's
// secrets: do not log it. Fields left unset so that they follow another
// field (see DefaultConfig) are omitted, so ConfigFromProperties restores
// the same Config. Durations are written in whole milliseconds.
func (c Config) Properties() map[string]string {
	out := make(map[string]string, len(properties))
	for _, p := range properties {
		if v, ok := p.get(&c); ok && !c.omitsKey(p.key) {
			out[p.key] = v
		}
	}
	for k, v := range c.Security.settings().Properties() {
		out[k] = v
	}
	return out
}

// ParseProperties reads Java properties, such as Kafka's
// config/consumer.properties, from r, with the rules of
// java.util.Properties.load; ConfigFromProperties turns the result into a
// Config. To load a file, open it and pass the *os.File:
//
//	f, err := os.Open("consumer.properties")
//	...
//	props, err := connector.ParseProperties(f)
//	f.Close()
//	cfg, warnings, err := connector.ConfigFromProperties(props)
//
// The rules:
//
//   - lines end at "\n", "\r" or "\r\n"; blank lines are skipped;
//   - a line whose first non-blank character is '#' or '!' is a comment;
//   - a line ending in an odd number of backslashes continues on the next
//     line, whose leading white space is dropped; comments do not continue;
//   - the key ends at the first unescaped '=', ':', space, tab or form feed;
//     white space around the separator is skipped, and the rest of the line,
//     trailing white space included, is the value;
//   - escapes \t \n \r \f and \uXXXX are decoded, a backslash before any
//     other character stands for that character, and a malformed \uXXXX is
//     a *SyntaxError;
//   - a repeated key keeps its last value.
//
// Java decodes an InputStream as ISO-8859-1. ParseProperties decodes UTF-8
// when the input is valid UTF-8 (dropping a leading byte order mark) and
// falls back to ISO-8859-1 otherwise, so files written by Java tools and by
// UTF-8 editors both load; \uXXXX escapes work in either. An error reading
// r is returned wrapped, and does not match ErrInvalidConfig.
func ParseProperties(r io.Reader) (map[string]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("connector: reading properties: %w", err)
	}
	props, err := javaprops.Parse(data)
	if se, ok := errors.AsType[*javaprops.SyntaxError](err); ok {
		return nil, &SyntaxError{Line: se.Line, Reason: se.Reason}
	}
	if err != nil {
		return nil, err
	}
	return props, nil
}

// SyntaxError reports properties that java.util.Properties.load would
// refuse (a malformed \uxxxx escape), from ParseProperties. It matches
// ErrInvalidConfig, as the errors of ConfigFromProperties and Validate do;
// errors reading the input do not.
type SyntaxError struct {
	// Line is the 1-based line where the offending logical line starts.
	Line int
	// Reason says what is wrong, naming the key or the value.
	Reason string
}

// Error formats the error as "connector: properties: line <n>: <reason>".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("connector: properties: line %d: %s", e.Line, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *SyntaxError) Unwrap() error { return ErrInvalidConfig }

// flattenErrors returns the errors joined in err (nil: none).
func flattenErrors(err error) []error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()
	}
	return []error{err}
}
