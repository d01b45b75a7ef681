package connector

import (
	"github.com/zkconsumer/zkconsumer/rebalance"
	"github.com/zkconsumer/zkconsumer/stream"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// The types below are declared in the packages that implement them and
// re-exported here, so that an application names everything it uses
// through this one import (internal/layering's TestOneImport checks that
// nothing in the connector's API leads to a type it cannot name from
// here). Each is the same type as the original: values pass freely.

// KafkaStream is stream.KafkaStream: one stream of messages handed to the
// application by CreateMessageStreams (Kafka's KafkaStream). Read it with
// Next from one goroutine at a time; mark a message consumed before asking
// for the next one with MarkConsumed, from any goroutine.
type KafkaStream = stream.KafkaStream

// Message is stream.Message: one record of one partition, as a stream
// hands it out (Kafka's MessageAndMetadata).
type Message = stream.Message

// Header is stream.Header: one record header (message format v2).
type Header = stream.Header

// TimestampType is stream.TimestampType: what a Message's Timestamp means.
type TimestampType = stream.TimestampType

// The values of TimestampType, as Kafka names them.
const (
	// NoTimestampType: the message has no timestamp (format v0).
	NoTimestampType = stream.NoTimestampType
	// CreateTime: the producer's time.
	CreateTime = stream.CreateTime
	// LogAppendTime: the broker's time when it wrote the message.
	LogAppendTime = stream.LogAppendTime
)

// RebalanceOutcome is rebalance.RebalanceOutcome: how a rebalance ended
// (RebalanceEvent.Outcome).
type RebalanceOutcome = rebalance.RebalanceOutcome

// The values of RebalanceOutcome.
const (
	// RebalanceSucceeded: a new generation started.
	RebalanceSucceeded = rebalance.RebalanceSucceeded
	// RebalanceFailed: every attempt failed (ErrRebalanceFailed); the
	// member owns nothing until the next rebalance.
	RebalanceFailed = rebalance.RebalanceFailed
	// RebalanceAborted: the member was closing, or its ZooKeeper session
	// expired and the next one is not there yet.
	RebalanceAborted = rebalance.RebalanceAborted
)

// SessionStats is zkutil.SessionStats: the state and event counts of the
// connector's ZooKeeper session (Stats.Session).
type SessionStats = zkutil.SessionStats

// SessionState is zkutil.SessionState: the state of the ZooKeeper session.
type SessionState = zkutil.SessionState

// The values of SessionState.
const (
	// SessionConnected: connected, with a session.
	SessionConnected = zkutil.StateConnected
	// SessionDisconnected: the connection is lost; the session may still
	// be alive on the server for the session timeout.
	SessionDisconnected = zkutil.StateDisconnected
	// SessionExpired: the server dropped the session; a new one follows.
	SessionExpired = zkutil.StateExpired
	// SessionClosed: the connector closed the session.
	SessionClosed = zkutil.StateClosed
)
