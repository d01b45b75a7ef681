package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zkconsumer/zkconsumer/connector"
)

// Kafka 1.1.1's console consumer runs its new consumer, a group
// coordinated by Kafka, when --zookeeper is not given; --bootstrap-server
// names the brokers. This file checks those arguments as Kafka does and
// runs the connector in its Kafka-coordinated mode
// (zkconsumer.group.coordination=kafka) for it. What the member retries
// while it joins (an unreachable --bootstrap-server, a coordinator that
// cannot be found) is printed on stderr as the connector reports it, and
// it keeps trying, as Kafka 1.1.1's consumer does; a fatal error (a
// refused password or certificate) is printed and ends the run with
// status 1 (main.go).

// checkNewConsumerArgs checks the arguments of Kafka's new-consumer mode in
// the order Kafka 1.1.1 checks them, with Kafka's messages, and records
// --bootstrap-server.
func checkNewConsumerArgs(set map[string]bool, str func(string) string, o *options, stderr io.Writer) error {
	if set["topic"] == set["whitelist"] { // blacklist is old-consumer only
		return badUsage("Exactly one of whitelist/topic is required.")
	}
	if set["partition"] {
		if _, err := strconv.ParseInt(str("partition"), 10, 32); err != nil {
			return badUsage(fmt.Sprintf("Cannot parse argument '%s' of option partition", str("partition")))
		}
		if !set["topic"] {
			return badUsage("The topic is required when partition is specified.")
		}
		if o.fromBeginning && set["offset"] {
			return badUsage("Options from-beginning and offset cannot be specified together.")
		}
	} else if set["offset"] {
		return badUsage("The partition is required when offset is specified.")
	}
	if set["offset"] {
		switch v := strings.ToLower(str("offset")); v {
		case "earliest", "latest":
		default:
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				return badUsage(fmt.Sprintf("The provided offset value '%s' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.", v))
			}
		}
	}
	if !set["bootstrap-server"] {
		return badUsage(`Missing required argument "[bootstrap-server]"`)
	}
	if set["new-consumer"] {
		fmt.Fprintln(stderr, "The --new-consumer option is deprecated and will be removed in a future major release."+
			"The new consumer is used by default if the --bootstrap-server option is provided.")
	}
	if set["partition"] {
		// Kafka reads one partition without a group here; the connector
		// has no such mode.
		return &usageError{msg: "console-consumer: --partition and --offset are not supported: every partition is consumed by a group"}
	}
	o.bootstrapServer = str("bootstrap-server")
	if set["topic"] {
		o.filter = connector.Whitelist(str("topic"))
	} else {
		o.filter = connector.Whitelist(str("whitelist"))
	}
	return nil
}

// kafkaCoordinatedProps completes o.props for the Kafka-coordinated mode as
// Kafka 1.1.1's getNewConsumerProps does (auto.offset.reset as the new
// consumer names it: earliest with --from-beginning, latest otherwise) and
// selects the connector's Kafka-coordinated mode.
func kafkaCoordinatedProps(o *options) error {
	if reset, ok := o.props["auto.offset.reset"]; ok {
		if o.fromBeginning && reset != "earliest" {
			return &usageError{msg: fmt.Sprintf("Can't simultaneously specify --from-beginning and 'auto.offset.reset=%s', please remove one option", reset)}
		}
	} else if o.fromBeginning {
		o.props["auto.offset.reset"] = "earliest"
	} else {
		o.props["auto.offset.reset"] = "latest"
	}
	o.props["zkconsumer.group.coordination"] = "kafka"
	o.props["bootstrap.servers"] = o.bootstrapServer
	return nil
}
