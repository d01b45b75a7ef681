package secure

import (
	"errors"
	"strings"
)

// jaasEntry is one login module of a sasl.jaas.config value.
type jaasEntry struct {
	module  string
	flag    string
	options map[string]string
}

// parseJAAS reads a sasl.jaas.config value: one login module,
// "<class> <flag> key=value ... ;", values quoted with '"' (a backslash
// escapes the next character inside quotes) or bare. Kafka accepts exactly
// one module in sasl.jaas.config, so does this. Errors never quote values:
// they may be passwords.
func parseJAAS(s string) (jaasEntry, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return jaasEntry{}, err
	}
	if len(toks) == 0 {
		return jaasEntry{}, errors.New("is empty")
	}
	if toks[len(toks)-1] != ";" {
		return jaasEntry{}, errors.New(`must end with ';'`)
	}
	toks = toks[:len(toks)-1]
	if len(toks) < 2 || toks[0] == "=" || toks[1] == "=" {
		return jaasEntry{}, errors.New(`must start with a login module class and a flag, as in "org.apache.kafka.common.security.plain.PlainLoginModule required"`)
	}
	e := jaasEntry{module: toks[0], flag: strings.ToLower(toks[1]), options: map[string]string{}}
	switch e.flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return jaasEntry{}, errors.New("the login module flag must be required, requisite, sufficient or optional")
	}
	rest := toks[2:]
	for len(rest) > 0 {
		if rest[0] == ";" {
			return jaasEntry{}, errors.New("must hold exactly one login module")
		}
		if len(rest) < 3 || rest[1] != "=" || rest[0] == "=" || rest[2] == "=" || rest[2] == ";" {
			return jaasEntry{}, errors.New(`options must have the form key=value or key="value"`)
		}
		e.options[rest[0]] = rest[2]
		rest = rest[3:]
	}
	return e, nil
}

// jaasTokens splits s into words, quoted strings (unquoted), "=" and ";".
func jaasTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '=' || c == ';':
			toks = append(toks, string(c))
			i++
		case c == '"':
			var b strings.Builder
			i++
			closed := false
			for i < len(s) {
				if s[i] == '\\' && i+1 < len(s) {
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				if s[i] == '"' {
					closed = true
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			if !closed {
				return nil, errors.New("has an unterminated quoted value")
			}
			toks = append(toks, b.String())
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r\f=;\"", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

// credentials returns the user name and password for PLAIN and SCRAM: from
// sasl.username and sasl.password, else from the username and password
// options of a PlainLoginModule or ScramLoginModule in sasl.jaas.config.
func (s Settings) credentials() (user, password string, err *KeyError) {
	if s.SASLUsername != "" || s.SASLPassword != "" {
		if s.SASLUsername == "" {
			return "", "", &KeyError{Key: "sasl.username", Reason: "must be set with sasl.password"}
		}
		return s.SASLUsername, s.SASLPassword, nil
	}
	if s.SASLJAASConfig == "" {
		return "", "", &KeyError{Key: "sasl.jaas.config", Reason: "must be set for sasl.mechanism " + s.mechanism() +
			` (org.apache.kafka.common.security.plain.PlainLoginModule or ...scram.ScramLoginModule with username="..." password="..."), or use sasl.username and sasl.password`}
	}
	e, perr := parseJAAS(s.SASLJAASConfig)
	if perr != nil {
		return "", "", &KeyError{Key: "sasl.jaas.config", Value: Hidden, Reason: perr.Error()}
	}
	want := "PlainLoginModule"
	if s.mechanism() != MechanismPlain {
		want = "ScramLoginModule"
	}
	name := e.module[strings.LastIndexByte(e.module, '.')+1:]
	if name != want {
		return "", "", &KeyError{Key: "sasl.jaas.config", Value: Hidden, Reason: "sasl.mechanism " + s.mechanism() + " needs a " + want + ", not " + e.module}
	}
	user, okU := e.options["username"]
	password, okP := e.options["password"]
	if !okU || !okP || user == "" {
		return "", "", &KeyError{Key: "sasl.jaas.config", Value: Hidden, Reason: e.module + " needs the options username and password"}
	}
	return user, password, nil
}
