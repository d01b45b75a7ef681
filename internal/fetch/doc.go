// Package fetch moves data from Kafka brokers into stream queues: a
// ConsumerFetcherManager, Kafka 1.1.1's ConsumerFetcherManager and
// ConsumerFetcherThread, for the connector.
//
// The path of a byte:
//
//  1. socket: a connection sarama opened (conn.go: TLS, SASL, ApiVersions),
//     read by one goroutine per connection (conn_reader.go).
//  2. frame: wireConn.roundTrip (wire.go) sends a Fetch request and reads
//     the response's size; one larger than the request allows
//     (responseLimit, wire_limit.go) is read past and refused.
//  3. response parse: respParser (wire_parse.go) parses the body once, as
//     it is read, against the request (wire_index.go): one block per
//     requested partition, record batch checksums verified while in cache.
//  4. partition: the fetcher (fetcher.go) sends the next request ahead at
//     the offsets the blocks' entry headers predict, then delivers each block.
//  5. record batch: entries (entries.go) checks each entry's header against
//     the fetch; blockDecoder (decode.go) filters control batches and
//     aborted transactions (transactions.go).
//  6. decompression: compress.go, compress_size.go, lz4_legacy.go, and
//     decode_stream.go for payloads larger than the decoding limit.
//  7. messages: decode.go turns records into messages aliasing the response
//     or the decompressed payload, within the limit of decode_budget.go.
//  8. chunk: fetcher.deliver enqueues them, in as many chunks as the limit
//     takes, with the pooled memory they hold (pool.go).
//  9. stream: streamcore.PartitionTopicInfo.EnqueueFrom puts each chunk on
//     its stream's queue, where KafkaStream.Next hands the messages out.
//
// The contract:
//
//   - A partition is fetched by the fetcher of (leader, fetcher id), the
//     id being abs(31*topic.hashCode + partition) % NumFetchers; without a
//     leader it stays with the leader finder (leader_finder.go), reported
//     to Config.OnError as ErrNoLeader after 5 seconds, then on a change of
//     error code or once a minute. A moved leader or a lost connection sends
//     it back there; it resumes at its fetched offset: no loss, no duplicate.
//   - A partition without an offset, or out of range, starts where
//     AutoOffsetReset says. A full queue blocks its fetcher (backpressure)
//     until the partition is paused; paused partitions are not fetched. The
//     fetched offset moves only once a chunk is queued, so StopConnections
//     returns exact offsets.
//   - One request is in flight while the previous response is decoded; a
//     partition that ends up elsewhere than predicted is skipped and asked
//     for again. A response holds at most R bytes (docs/tuning.md): P × S of
//     records (at most max(S, 50 MiB)), one batch of up to max(S, 1 MiB +
//     12 B) sent whole beyond them (KIP-74), 400 bytes per partition and,
//     with read_committed, the aborted transactions; 100 MiB at most. A
//     larger one is refused unread and each partition fetched alone; one
//     still too large stops with stream.ErrMessageTooLarge. Parsing a
//     response allocates a fixed amount per requested partition, whatever
//     it holds: other partitions are skipped without allocating, aborted
//     lists are used in place.
//   - Messages alias their response or decompression buffer; nothing is
//     copied. With Config.RecycleMessages buffers, slabs and messages are
//     reused once consumed (Message.Clone keeps one).
//   - What a chunk holds beyond its response is bounded by
//     Config.MaxDecodedBytes (by default 32 × the fetch size): no count or
//     declared size is allocated on before it is checked against its bytes
//     and that limit. A single record over it stops its partition with
//     stream.ErrMessageTooLarge and ErrDecodedTooLarge; a message larger than
//     the fetch size, judged as a batch holding only it, stops it with
//     stream.ErrMessageTooLarge after the messages before it (a compressed
//     batch sent whole is delivered). A stopped partition is not fetched
//     until the next generation, or until a pause drops the error.
//   - A batch that cannot be decoded (checksum, decompression, malformed
//     record, impossible offsets) stops only its partition, after the
//     messages before it, with stream.ErrCorruptMessage; a response whose
//     structure cannot be parsed is fetched again partition by partition
//     (corrupt.go). Entries before the fetch offset are skipped; a batch
//     reaching the reported high watermark waits for the next fetch.
//   - Other refusals of a partition (authorisation, ...) send it back to the
//     leader finder, reported to Config.OnError paced as above. Revoked
//     partitions and closed queues are dropped.
//
// Fetch versions are negotiated per connection up to Kafka 3.9 (or
// Config.Sarama.Version): brokers from 0.10.0 on, message sets and record
// batches. Applications need nothing here: connector re-exports FetchEvent
// and ErrNoLeader; a test of the module keeps the list of exported names.
package fetch
