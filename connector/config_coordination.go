package connector

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// kafkaMode reports whether the group is coordinated by Kafka.
func (c *Config) kafkaMode() bool {
	return c.GroupCoordination == CoordinationKafka
}

// ignoredKeys returns the keys among present that the chosen coordination
// mode ignores.
func (c *Config) ignoredKeys(present func(key string) bool) []string {
	other := kafkaOnlyKeys
	if c.kafkaMode() {
		other = zookeeperOnlyKeys
	}
	var out []string
	for _, k := range other {
		if present(k) {
			out = append(out, k)
		}
	}
	return out
}

// ignoredKeyWarning is the warning for key, which the chosen mode ignores.
func (c *Config) ignoredKeyWarning(key string) string {
	if c.kafkaMode() {
		hint := ""
		switch key {
		case keyZooKeeperConnect:
			hint = "; the group's brokers are found through " + keyBootstrapServers
		case keyZooKeeperSessionTimeout:
			hint = "; did you mean " + keySessionTimeout + "?"
		case keyOffsetsStorage, keyDualCommitEnabled:
			hint = "; offsets are committed to Kafka's group coordinator"
		case keyRebalanceMaxRetries, keyRebalanceBackoff:
			hint = "; the coordinator's rebalances are bounded by " + keyMaxPollInterval
		}
		return fmt.Sprintf("connector: property %s is ignored with %s=%s%s", key, keyGroupCoordination, CoordinationKafka.String(), hint)
	}
	hint := ""
	switch key {
	case keyBootstrapServers:
		hint = "; the ZooKeeper-based consumer finds brokers through zookeeper.connect"
	case keySessionTimeout:
		hint = "; did you mean zookeeper.session.timeout.ms?"
	}
	return fmt.Sprintf("connector: property %s only applies with %s=%s and is ignored%s", key, keyGroupCoordination, CoordinationKafka.String(), hint)
}

// ModeWarnings lists the fields that the chosen coordination mode ignores
// but that are set to something other than their default, one warning per
// Kafka key: for example zookeeper.session.timeout.ms with
// zkconsumer.group.coordination=kafka, or group.instance.id with
// zookeeper. Such keys are not errors, so that one properties file can
// serve both modes while a group moves off ZooKeeper (Kafka's Java
// consumer likewise warns about configurations it does not use); New logs
// these warnings, and ConfigFromProperties returns them for the keys a
// properties file names.
func (c Config) ModeWarnings() []string {
	def := DefaultConfig()
	def.GroupCoordination = c.GroupCoordination
	mine, defaults := c.Properties(), def.Properties()
	// Properties leaves the other mode's keys out; compare them here.
	for _, p := range properties {
		if v, ok := p.get(&c); ok {
			mine[p.key] = v
		}
		if v, ok := p.get(&def); ok {
			defaults[p.key] = v
		}
	}
	// A field that follows another (filled in by Validate) counts as set
	// only when it differs from what it follows.
	follows := map[string]bool{
		keyZooKeeperConnectionTimeout: c.ZooKeeperConnectionTimeout == c.ZooKeeperSessionTimeout,
		keyRebalanceBackoff:           c.RebalanceBackoff == c.ZooKeeperSyncTime,
		keyDualCommitEnabled: c.DualCommitEnabled != DualCommitDefault &&
			(c.DualCommitEnabled == DualCommitOn) == (c.OffsetsStorage == OffsetsStorageKafka),
	}
	var out []string
	for _, k := range c.ignoredKeys(func(key string) bool {
		v, ok := mine[key]
		d, dok := defaults[key]
		return ok && (!dok || v != d) && !follows[key]
	}) {
		out = append(out, c.ignoredKeyWarning(k))
	}
	return out
}

// omitsKey reports whether Properties leaves key out: it belongs to the
// mode not chosen.
func (c *Config) omitsKey(key string) bool {
	other := kafkaOnlyKeys
	if c.kafkaMode() {
		other = zookeeperOnlyKeys
	}
	return slices.Contains(other, key)
}

// validateCoordination checks the coordination mode and what it requires:
// zookeeper.connect with zookeeper, bootstrap.servers and the group
// membership timeouts with kafka.
func (c *Config) validateCoordination(v *validator) {
	if !coordinationEnum.check(v, uint8(c.GroupCoordination)) {
		return
	}
	if !c.kafkaMode() {
		if reason := checkZooKeeperConnect(c.ZooKeeperConnect); reason != "" {
			if c.ZooKeeperConnect == "" && c.BootstrapServers != "" {
				reason = "required with " + keyGroupCoordination + "=" + CoordinationZooKeeper.String() +
					" (the default); to use Kafka's group coordinator with " + keyBootstrapServers +
					" instead, set " + keyGroupCoordination + "=" + CoordinationKafka.String()
			} else if c.ZooKeeperConnect == "" {
				reason = "required: set " + keyZooKeeperConnect + " (host1:port1,host2:port2/chroot), or " +
					keyBootstrapServers + " with " + keyGroupCoordination + "=" + CoordinationKafka.String() +
					" to use Kafka's group coordinator"
			}
			v.fail(keyZooKeeperConnect, c.ZooKeeperConnect, reason)
		}
	} else if reason := checkBootstrapServers(c.BootstrapServers); reason != "" {
		v.fail(keyBootstrapServers, c.BootstrapServers, reason)
	}
	limit := func(key string, d time.Duration) bool {
		return v.check(key, ms(d), d > 0 && d.Milliseconds() <= 1<<31-1, "must be between 1 and 2147483647")
	}
	sessionOK := limit(keySessionTimeout, c.SessionTimeout)
	if limit(keyHeartbeatInterval, c.HeartbeatInterval) && sessionOK && c.HeartbeatInterval >= c.SessionTimeout {
		v.fail(keyHeartbeatInterval, ms(c.HeartbeatInterval), "must be lower than "+keySessionTimeout+" ("+ms(c.SessionTimeout)+")")
	}
	limit(keyMaxPollInterval, c.MaxPollInterval)
	limit(keyMetadataMaxAge, c.MetadataMaxAge)
	c.validateGroupProtocol(v)
	if c.GroupInstanceID != "" {
		v.check(keyGroupInstanceID, c.GroupInstanceID, validChars(c.GroupInstanceID) && len(c.GroupInstanceID) <= 249,
			"must contain only ASCII alphanumerics, '.', '_' and '-', at most 249 of them")
	}
}

// brokerList splits bootstrap.servers.
func (c *Config) brokerList() []string {
	var out []string
	for _, s := range strings.Split(c.BootstrapServers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// checkBootstrapServers returns why s is not a usable bootstrap.servers
// list ("host1:port1,host2:port2"), or "" if it is.
func checkBootstrapServers(s string) string {
	const form = "; must look like host1:port1,host2:port2"
	if strings.TrimSpace(s) == "" {
		return "required with " + keyGroupCoordination + "=" + CoordinationKafka.String() + form
	}
	for _, server := range strings.Split(s, ",") {
		server = strings.TrimSpace(server)
		if server == "" {
			continue // Java skips empty entries too
		}
		host, port := server, ""
		if i := strings.LastIndexByte(server, ':'); i >= 0 {
			host, port = server[:i], server[i+1:]
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		n, err := strconv.Atoi(port)
		if host == "" || err != nil || n < 1 || n > 65535 {
			return "server " + strconv.Quote(server) + " needs a host and a port" + form
		}
	}
	return ""
}
