// Package zkjson reads and writes the JSON that Kafka keeps in ZooKeeper
// the way Kafka's Scala code does, for the codecs of zkutil and
// internal/zkbrokers.
//
// Reading goes through encoding/json into json.RawMessage maps, so key
// order never matters and key matching is exact (struct decoding would
// match keys case-insensitively). Numbers are checked the way Jackson's
// IntNode is: an integer literal without fraction or exponent that fits
// the size asked for. Errors say what is wrong with the value and name no
// package; the codecs wrap them with the znode's path.
package zkjson
