package chaos

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ZooKeeper's transaction log, as its servers write it to
// dataDir/version-2/log.<first zxid in hex>: a file header (magic "ZKLG",
// format version 2, database id), then one entry per transaction: an
// Adler-32 checksum (8 bytes), the length of the transaction (4 bytes), the
// transaction (a TxnHeader, the operation's record, and from ZooKeeper 3.6
// on a digest of the tree) and the byte 'B'. The rest of the file is
// preallocated zeros: an entry of length 0 ends it. Every integer is big
// endian; strings and byte buffers are a 4-byte length (-1 for null) and
// the bytes; vectors a 4-byte count and the elements (Apache Jute's binary
// archive).
//
// The chaos run reads these logs after the run (zkTxnLogs) for a record of
// every committed offset that ZooKeeper applied, whichever session wrote it
// and however briefly it lasted: nothing is sampled.

// txnLogMagic is the first four bytes of a transaction log ("ZKLG").
const txnLogMagic = 0x5a4b4c47

// ZooKeeper operation codes of the transactions the verifier reads.
const (
	zkOpCreate          = 1
	zkOpDelete          = 2
	zkOpSetData         = 5
	zkOpMulti           = 14
	zkOpCreate2         = 15
	zkOpCreateContainer = 19
	zkOpCreateTTL       = 21
	zkOpCreateSession   = -10
	zkOpCloseSession    = -11
	zkOpError           = -1
)

// ZKTxn is one transaction of a ZooKeeper transaction log, reduced to what
// the verifier needs. A multi-operation transaction yields one ZKTxn per
// operation that changed a node, all with the multi's header.
type ZKTxn struct {
	// Session is the id of the session that issued the transaction
	// (TxnHeader.clientId).
	Session int64
	// Zxid orders the transactions of the ensemble.
	Zxid int64
	// Time is when the leader accepted the transaction, in Unix
	// milliseconds of its clock.
	Time int64
	// Op is the operation code (zkOpCreate, zkOpSetData, ...); for a
	// multi, that of the operation within it.
	Op int32
	// Path and Data are the node written; Data is nil for deletes and
	// session operations.
	Path string
	Data []byte
	// Ephemeral reports a create of an ephemeral node.
	Ephemeral bool
	// InMulti reports an operation of a multi-operation transaction;
	// Index is its position in the multi (0 otherwise).
	InMulti bool
	Index   int
}

// errTxnLog marks a log that is not what ZooKeeper writes.
var errTxnLog = errors.New("chaos: not a ZooKeeper transaction log")

// DecodeZKTxnLog decodes one transaction log file. A last entry cut short
// (the server was killed while writing it) ends the log without an error;
// the count of such entries is returned as partial (0 or 1). An entry whose
// checksum does not match is an error: the log is damaged.
func DecodeZKTxnLog(data []byte) (txns []ZKTxn, partial int, err error) {
	if len(data) < 16 {
		return nil, 0, fmt.Errorf("%w: %d bytes, shorter than the header", errTxnLog, len(data))
	}
	if m := binary.BigEndian.Uint32(data); m != txnLogMagic {
		return nil, 0, fmt.Errorf("%w: magic %#x", errTxnLog, m)
	}
	if v := int32(binary.BigEndian.Uint32(data[4:])); v != 2 {
		return nil, 0, fmt.Errorf("%w: format version %d, want 2", errTxnLog, v)
	}
	pos := 16
	for entry := 0; ; entry++ {
		if len(data)-pos < 12 {
			return txns, boolInt(!allZero(data[pos:])), nil
		}
		sum := binary.BigEndian.Uint64(data[pos:])
		n := int32(binary.BigEndian.Uint32(data[pos+8:]))
		if n == 0 {
			// Preallocated space, or an entry whose length was not
			// written yet.
			return txns, boolInt(sum != 0), nil
		}
		if n < 0 {
			return txns, 0, fmt.Errorf("%w: entry %d at byte %d has length %d", errTxnLog, entry, pos, n)
		}
		body := pos + 12
		if int64(body)+int64(n)+1 > int64(len(data)) {
			return txns, 1, nil
		}
		buf := data[body : body+int(n)]
		if data[body+int(n)] != 'B' {
			// The entry was written up to its length, not its end marker:
			// the server died writing it. Anything after it is garbage.
			if allZero(data[body+int(n):]) {
				return txns, 1, nil
			}
			return txns, 0, fmt.Errorf("%w: entry %d at byte %d ends with %#x, not 'B'", errTxnLog, entry, pos, data[body+int(n)])
		}
		if got := uint64(adler32.Checksum(buf)); got != sum {
			return txns, 0, fmt.Errorf("%w: entry %d at byte %d: checksum %#x, stored %#x", errTxnLog, entry, pos, got, sum)
		}
		ts, err := decodeTxn(buf)
		if err != nil {
			return txns, 0, fmt.Errorf("chaos: transaction log entry %d at byte %d: %w", entry, pos, err)
		}
		txns = append(txns, ts...)
		pos = body + int(n) + 1
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// decodeTxn decodes a TxnHeader and the record after it. Operations that
// change no node (sessions, errors, checks, ACLs) keep only the header.
func decodeTxn(buf []byte) ([]ZKTxn, error) {
	r := &beReader{b: buf}
	h := ZKTxn{Session: r.int64()}
	_ = r.int32() // cxid
	h.Zxid = r.int64()
	h.Time = r.int64()
	h.Op = r.int32()
	if r.err != nil {
		return nil, fmt.Errorf("header: %w", r.err)
	}
	if h.Op != zkOpMulti {
		t, err := decodeRecord(h, r)
		if err != nil {
			return nil, err
		}
		return []ZKTxn{t}, nil
	}
	// MultiTxn: a vector of (type, serialized record).
	n := int(r.int32())
	if r.err != nil || n < 0 || n > len(buf) {
		return nil, fmt.Errorf("multi: %d operations: %v", n, r.err)
	}
	var out []ZKTxn
	for i := range n {
		op := r.int32()
		sub := r.buffer()
		if r.err != nil {
			return nil, fmt.Errorf("multi operation %d: %w", i, r.err)
		}
		t := h
		t.Op, t.InMulti, t.Index = op, true, i
		t, err := decodeRecord(t, &beReader{b: sub})
		if err != nil {
			return nil, fmt.Errorf("multi operation %d: %w", i, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// decodeRecord reads the record of t.Op from r into t.
func decodeRecord(t ZKTxn, r *beReader) (ZKTxn, error) {
	switch t.Op {
	case zkOpCreate, zkOpCreate2:
		// CreateTxn: path, data, ACLs, ephemeral, parent cversion.
		t.Path, t.Data = ustring(r), bufferCopy(r)
		skipACLs(r)
		t.Ephemeral = r.boolean()
	case zkOpCreateContainer, zkOpCreateTTL:
		t.Path, t.Data = ustring(r), bufferCopy(r)
	case zkOpDelete:
		t.Path = ustring(r)
	case zkOpSetData:
		t.Path, t.Data = ustring(r), bufferCopy(r)
	default:
		return t, nil
	}
	if r.err != nil {
		return t, fmt.Errorf("operation %d: %w", t.Op, r.err)
	}
	return t, nil
}

// ustring reads Jute's ustring: a buffer, as a string ("" for null).
func ustring(r *beReader) string { return string(r.buffer()) }

// bufferCopy reads a buffer into a slice of its own (nil for null).
func bufferCopy(r *beReader) []byte { return slices.Clone(r.buffer()) }

// skipACLs skips a vector of ACLs: permissions, then the id's scheme and id.
func skipACLs(r *beReader) {
	n := int(r.int32())
	if r.err != nil || n == -1 {
		return
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%d ACLs", n)
		return
	}
	for range n {
		_ = r.int32()
		_ = ustring(r)
		_ = ustring(r)
	}
}

// ReadZKTxnLogDir decodes every log.* file of one server's version-2
// directory, in zxid order.
func ReadZKTxnLogDir(dir string) (txns []ZKTxn, partial int, err error) {
	names, err := filepath.Glob(filepath.Join(dir, "log.*"))
	if err != nil {
		return nil, 0, err
	}
	type file struct {
		name string
		zxid int64
	}
	var files []file
	for _, n := range names {
		z, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(n), "log."), 16, 64)
		if err != nil {
			continue // not a log (log.xxx.tmp, say)
		}
		files = append(files, file{n, z})
	}
	slices.SortFunc(files, func(a, b file) int { return cmpInt64(a.zxid, b.zxid) })
	for _, f := range files {
		data, err := os.ReadFile(f.name)
		if err != nil {
			return nil, 0, err
		}
		ts, p, err := DecodeZKTxnLog(data)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", f.name, err)
		}
		txns = append(txns, ts...)
		partial += p
	}
	return txns, partial, nil
}

// zkTxnHistory merges the logs of every server of an ensemble: each
// transaction once, in zxid order, and only those that a majority of the
// servers logged. ZooKeeper commits a transaction once a majority has
// logged it, and later truncates only transactions that were never
// committed, so a transaction logged by a majority was committed and one
// logged by fewer was not (a minority can hold a proposal of a leader that
// lost its quorum until it rejoins). With one server, every transaction
// counts.
func zkTxnHistory(servers [][]ZKTxn) []ZKTxn {
	type key struct {
		zxid  int64
		index int
	}
	count := map[key]int{}
	first := map[key]ZKTxn{}
	var order []key
	for _, txns := range servers {
		seen := map[key]bool{}
		for _, t := range txns {
			k := key{t.Zxid, t.Index}
			if seen[k] {
				continue // a log file that repeats an entry
			}
			seen[k] = true
			if count[k] == 0 {
				first[k] = t
				order = append(order, k)
			}
			count[k]++
		}
	}
	quorum := len(servers)/2 + 1
	var out []ZKTxn
	for _, k := range order {
		if count[k] >= quorum {
			out = append(out, first[k])
		}
	}
	slices.SortStableFunc(out, func(a, b ZKTxn) int {
		if a.Zxid != b.Zxid {
			return cmpInt64(a.Zxid, b.Zxid)
		}
		return a.Index - b.Index
	})
	return out
}
