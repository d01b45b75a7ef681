// Package abortdial is a dialer for sarama whose connections can all be
// closed at once. sarama.Broker holds its lock for a whole request, and
// some requests wait long (JoinGroup for minutes, any request for its read
// timeout): closing the sockets is the only way to end such a request
// early, which a cancelled context or a Close must do.
package abortdial
