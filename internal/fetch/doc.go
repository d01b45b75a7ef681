// Package fetch moves data from Kafka brokers into stream queues.
//
// A ConsumerFetcherManager owns a leader finder, which resolves the leader of
// every assigned partition, and one fetcher per (broker, fetcher id), which
// sends multi-partition fetch requests and enqueues one FetchedDataChunk per
// partition into the queue of the stream that owns it. It uses sarama's
// protocol layer (sarama.Broker: connections, TLS, SASL, ApiVersions,
// ListOffsets and Metadata requests) but sends fetch requests and decodes
// their responses itself, on the connection sarama opened: the next
// request goes out once the batch headers of a response have been read,
// and each partition's records are decoded only when they are enqueued
// The fetch loop follows Kafka 1.1.1's
// ConsumerFetcherManager and ConsumerFetcherThread:
//
//   - StartConnections puts every partition in the leaderless set. The
//     leader finder asks a broker from the BrokerSource (tried in random
//     order) for the metadata of their topics, then hands each partition
//     with a leader to the fetcher for (leader, fetcher id), where the
//     fetcher id is abs(31*topic.hashCode + partition) % NumFetchers.
//   - A partition without an offset (negative fetched offset) starts where
//     AutoOffsetReset says; so does a partition whose offset is out of
//     range. Both its fetched and its consumed offset are reset.
//   - A fetcher blocks while a partition's queue is full, which holds back
//     every partition of that fetcher (Kafka's backpressure), until the
//     partition is paused (its PartitionTopicInfo's Pause): a paused
//     partition is left out of the fetcher's requests, and a fetcher
//     blocked on its queue gives the chunk up and serves the others. Its
//     fetched offset advances only once the chunk is queued, so the fetched offsets
//     StopConnections returns are exact: everything below went to the
//     streams, nothing at or above did. The stream of a paused partition
//     drops its chunks and moves its fetched offset back to where it
//     stands; chunks queued before that, and a fetch made from the old
//     offset, are refused or dropped, and the partition is fetched from
//     the new offset once resumed.
//   - A partition stopped at an error (a message larger than the fetch
//     size, records that cannot be decoded) stays the fetcher's but is not
//     fetched, unless a pause drops the error with the chunks before it:
//     then it is fetched again, and the error comes after them.
//   - Unlike Kafka's thread, a fetcher keeps one request in flight while
//     it decodes and enqueues the previous response: the next request goes
//     out as soon as a response arrives, at the offsets that response will
//     move its partitions to (read from the batch headers, and stopping at
//     a message too large). A partition that ends up elsewhere anyway is
//     skipped in the response to that request and asked for again, where
//     it is, in the next one. This costs at most
//     one more response in memory per fetcher (see the next point); a
//     fetcher blocked on a full queue has at most that one request ahead.
//   - A fetch response is bounded by its request, and no larger one is
//     read into memory. For P partitions of fetch size S
//     (fetch.message.max.bytes), a response holds at most P × S of
//     records (at most the request's limit of max(S, 50 MiB)), plus one
//     batch of up to max(S, 1 MiB + 12 B) that a broker sends whole beyond
//     the fetch sizes (KIP-74: the first batch of the first partition
//     with data, however large; 1 MiB + 12 B is Kafka's default
//     message.max.bytes, and Kafka requires fetch.message.max.bytes to be
//     at least the brokers' value), at most 400 bytes per partition of
//     structure (128 and its topic's name), and with read_committed the
//     aborted transactions its partitions can list (28 % of P × S and
//     1.1 KiB per partition at most); 100 MiB at most. That is the R of
//     the memory bound of docs/tuning.md. A larger response is read past, keeping
//     nothing, and refused: each partition is then fetched alone, and one
//     whose lone response is still too large has a first batch larger than
//     its fetch size allows, and stops there with stream.ErrMessageTooLarge
//     (raise fetch.message.max.bytes), as a message larger than the fetch
//     size does. Entries of a response for partitions the request did not
//     ask for are skipped without allocating, and aborted-transaction lists
//     are used where they lie in the response, so parsing a response
//     allocates a fixed amount per requested partition whatever it holds.
//   - Messages alias the response they came in (or, for a compressed
//     batch, the buffer it was decompressed into): nothing is copied, and
//     a message, or only its key, that the application keeps pins that
//     whole buffer. Responses are read into buffers of the fetcher's free
//     list; one no queued message aliases (an empty one, or one of
//     compressed batches only) is read into again. With
//     Config.RecycleMessages (opt-in) every response is, once the chunks
//     that alias it are consumed, and so are the messages themselves and
//     the decompression buffers: a message is then valid only until the
//     next call to Next (stream.Message.Clone keeps one).
//   - Record batch checksums are verified as the response is read, while
//     each piece of it is in the CPU's cache, by the goroutine that reads
//     the connection (one per connection, for as long as it lives).
//   - A partition whose leader moved, or whose fetcher lost its connection,
//     goes back to the leader finder and resumes at its fetched offset: no
//     loss, no duplicate.
//   - A message larger than the partition's fetch size (fetch.message.max.bytes)
//     cannot be consumed: the messages before it are delivered, then the
//     stream gets an error wrapping stream.ErrMessageTooLarge and the
//     partition stops at it until the next generation. A message is too
//     large when a record batch holding only it would be, which is what
//     Kafka's consumer saw (brokers down-convert batches to single messages
//     for it), whatever the broker version and however the producer batched.
//     A compressed batch is judged whole: brokers from 0.10.1 on send the
//     first batch of a response whole however large (KIP-74), so such a
//     batch is delivered.
//   - What one chunk holds beyond its response (decompressed payloads,
//     messages, headers) is bounded by Config.MaxDecodedBytes, by default
//     32 × the fetch size, whatever the records claim: no count or
//     declared size is allocated on before it is checked against the
//     bytes that must hold it (a payload declaring more than its bytes
//     can hold in its codec is corrupt, see below) and against that
//     limit, and a decompression buffer grows with the output a payload
//     really produces, not with what its block headers allow. A block that
//     decodes to more goes out in several chunks, from the same response,
//     the records of one batch across chunks if need be; a single record
//     that alone exceeds the limit stops its partition with an error
//     wrapping stream.ErrMessageTooLarge and ErrDecodedTooLarge.
//   - Entries that end before the fetch offset are skipped, as Java's
//     consumer does.
//   - A batch that cannot be decoded (a checksum mismatch with check.crcs,
//     a payload that does not decompress or declares a size its bytes
//     cannot hold, a malformed record, records after its declared count,
//     offsets that cannot be what the fetch asked for: overlapping the
//     batch before, or records past the batch's own last offset) stops
//     only its partition: the messages before the bad batch are
//     delivered, then the partition's stream gets an error wrapping
//     stream.ErrCorruptMessage and the partition stops at the bad batch
//     until the next generation. The other partitions carry on. A response
//     whose structure cannot be parsed at all is fetched again partition
//     by partition, to find the one at fault.
//   - A batch, whole or cut by the fetch size, that reaches the high
//     watermark its response reports is not handed out and does not move
//     the partition, without an error: a leader that just took over can
//     report a figure older than its read. It is fetched again.
//   - A partition the metadata gives no leader (its topic was deleted or
//     is not authorised, no replica is alive) stays with the leader
//     finder, which asks again every RefreshLeaderBackoff. Once it has
//     been leaderless for 5 seconds it is reported to Config.OnError as a
//     *stream.PartitionError wrapping ErrNoLeader and the broker's error
//     code (UNKNOWN_TOPIC_OR_PARTITION, TOPIC_AUTHORIZATION_FAILED, ...):
//     again when the code changes, else once a minute while it lasts.
//   - A partition whose fetch the broker refuses with another error code
//     (TOPIC_AUTHORIZATION_FAILED when the topic may be described but not
//     read, ...) goes back to the leader finder too, and is fetched again
//     after RefreshLeaderBackoff. The failure is reported to
//     Config.OnError, wrapping the code, the first time, when the code
//     changes, and else once a minute while it lasts.
//   - Revoked partitions and closed queues are dropped from fetching.
//
// Protocol versions are capped at Kafka 3.9 (or Config.Sarama.Version) and
// negotiated per connection through ApiVersions, so brokers from 0.10.0 on
// work: Fetch v12 on 2.7+, v3 on 0.10.1 (what Kafka 1.1.1 sent). With fetch
// v4+ record batches (v2), control records and read_committed are
// supported; older brokers send message sets (v0/v1), compressed or not.
//
// Errors of one partition that stop it go to its stream; errors the manager
// retries by itself (no broker reachable, a leader that cannot be reached,
// a partition without a leader) go to Config.OnError and the log.
//
// The package is exported for the connector, which wires it to the
// rebalance layer, and its exported names are the manager's contract with
// it: the partitions it fetches are PartitionTopicInfos, declared under
// internal/, which code outside this module can neither create nor reach,
// so an application cannot drive a fetcher on its own. Applications need nothing
// here: connector re-exports FetchEvent (the metrics of one fetch) and
// ErrNoLeader. A test of the module keeps a list of the exported names,
// so that none is added or removed by accident. Before 1.0 the
// exported surface may shrink in a minor version.
package fetch
