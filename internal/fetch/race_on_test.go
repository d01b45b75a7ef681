//go:build race

package fetch

// raceEnabled: the race detector is on. It makes sync.Pool drop items at
// random, so that pooled buffers (lz4's blocks, decompression scratch) are
// allocated again more often than they are in production.
const raceEnabled = true
