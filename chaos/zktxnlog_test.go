package chaos

import (
	"encoding/binary"
	"hash/adler32"
	"strings"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// juteWriter writes Jute's binary archive, for logs made by hand.
type juteWriter struct{ b []byte }

func (w *juteWriter) int(v int32)  { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *juteWriter) long(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *juteWriter) boolean(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}
func (w *juteWriter) buffer(p []byte) {
	if p == nil {
		w.int(-1)
		return
	}
	w.int(int32(len(p)))
	w.b = append(w.b, p...)
}
func (w *juteWriter) str(s string) { w.buffer([]byte(s)) }

// txnHeader writes a TxnHeader.
func (w *juteWriter) txnHeader(session int64, zxid, ms int64, op int32) {
	w.long(session)
	w.int(1) // cxid
	w.long(zxid)
	w.long(ms)
	w.int(op)
}

// createRecord writes a CreateTxn with one ACL.
func (w *juteWriter) createRecord(path string, data []byte, ephemeral bool) {
	w.str(path)
	w.buffer(data)
	w.int(1)
	w.int(31)
	w.str("world")
	w.str("anyone")
	w.boolean(ephemeral)
	w.int(3) // parent cversion
}

// digest appends a TxnDigest, as ZooKeeper 3.6 and later write after the
// record.
func (w *juteWriter) digest() {
	w.int(2)
	w.long(0x1234)
}

// txnLog assembles a log file from serialized transactions, followed by
// preallocated zeros.
func txnLog(txns ...[]byte) []byte {
	w := &juteWriter{}
	w.int(txnLogMagic)
	w.int(2)
	w.long(0)
	for _, t := range txns {
		w.long(int64(adler32.Checksum(t)))
		w.buffer(t)
		w.b = append(w.b, 'B')
	}
	return append(w.b, make([]byte, 256)...)
}

func setData(session, zxid int64, path, data string) []byte {
	w := &juteWriter{}
	w.txnHeader(session, zxid, 1000+zxid, zkOpSetData)
	w.str(path)
	w.buffer([]byte(data))
	w.int(int32(zxid))
	w.digest()
	return w.b
}

func create(session, zxid int64, path, data string, ephemeral bool) []byte {
	w := &juteWriter{}
	w.txnHeader(session, zxid, 1000+zxid, zkOpCreate)
	w.createRecord(path, []byte(data), ephemeral)
	w.digest()
	return w.b
}

func deleteTxn(session, zxid int64, path string) []byte {
	w := &juteWriter{}
	w.txnHeader(session, zxid, 1000+zxid, zkOpDelete)
	w.str(path)
	return w.b
}

func closeSession(session, zxid int64) []byte {
	w := &juteWriter{}
	w.txnHeader(session, zxid, 1000+zxid, zkOpCloseSession)
	w.int(0) // CloseSessionTxn: no paths
	return w.b
}

// multi writes a multi of a version check and a setData.
func multi(session, zxid int64, checkPath, path, data string) []byte {
	check := &juteWriter{}
	check.str(checkPath)
	check.int(0)
	set := &juteWriter{}
	set.str(path)
	set.buffer([]byte(data))
	set.int(7)
	w := &juteWriter{}
	w.txnHeader(session, zxid, 1000+zxid, zkOpMulti)
	w.int(2)
	w.int(13) // check
	w.buffer(check.b)
	w.int(zkOpSetData)
	w.buffer(set.b)
	w.digest()
	return w.b
}

func TestDecodeZKTxnLog(t *testing.T) {
	const off = "/kafka/consumers/g/offsets/t/0"
	data := txnLog(
		create(1, 1, "/kafka/consumers/g/ids/c1", `{"version":1}`, true),
		setData(1, 2, off, "10"),
		multi(1, 3, "/kafka/consumers/g/owners/t/0", off, "11"),
		deleteTxn(2, 4, "/kafka/consumers/g/owners/t/0"),
		closeSession(1, 5),
	)
	txns, partial, err := DecodeZKTxnLog(data)
	if err != nil || partial != 0 {
		t.Fatalf("decode: %v, %d partial", err, partial)
	}
	want := []ZKTxn{
		{Session: 1, Zxid: 1, Time: 1001, Op: zkOpCreate, Path: "/kafka/consumers/g/ids/c1", Data: []byte(`{"version":1}`), Ephemeral: true},
		{Session: 1, Zxid: 2, Time: 1002, Op: zkOpSetData, Path: off, Data: []byte("10")},
		{Session: 1, Zxid: 3, Time: 1003, Op: 13, InMulti: true, Index: 0},
		{Session: 1, Zxid: 3, Time: 1003, Op: zkOpSetData, Path: off, Data: []byte("11"), InMulti: true, Index: 1},
		{Session: 2, Zxid: 4, Time: 1004, Op: zkOpDelete, Path: "/kafka/consumers/g/owners/t/0"},
		{Session: 1, Zxid: 5, Time: 1005, Op: zkOpCloseSession},
	}
	if len(txns) != len(want) {
		t.Fatalf("%d transactions, want %d: %+v", len(txns), len(want), txns)
	}
	for i := range want {
		if got := txns[i]; got.Session != want[i].Session || got.Zxid != want[i].Zxid || got.Time != want[i].Time ||
			got.Op != want[i].Op || got.Path != want[i].Path || string(got.Data) != string(want[i].Data) ||
			got.Ephemeral != want[i].Ephemeral || got.InMulti != want[i].InMulti || got.Index != want[i].Index {
			t.Errorf("transaction %d: %+v, want %+v", i, got, want[i])
		}
	}
}

func TestDecodeZKTxnLogDamage(t *testing.T) {
	good := txnLog(setData(1, 1, "/a", "1"), setData(1, 2, "/a", "2"))
	end := len(good) - 256 // the end of the last entry

	// A server killed while writing its last entry: that entry is cut.
	txns, partial, err := DecodeZKTxnLog(good[:end-3])
	if err != nil || partial != 1 || len(txns) != 1 {
		t.Fatalf("cut entry: %d transactions, %d partial, %v", len(txns), partial, err)
	}
	// Written up to its length, the end marker still zero.
	cut := append([]byte(nil), good...)
	cut[end-1] = 0
	if txns, partial, err := DecodeZKTxnLog(cut); err != nil || partial != 1 || len(txns) != 1 {
		t.Fatalf("no end marker: %d transactions, %d partial, %v", len(txns), partial, err)
	}
	// A flipped byte inside an entry fails its checksum.
	bad := append([]byte(nil), good...)
	bad[16+12+3] ^= 0xff
	if _, _, err := DecodeZKTxnLog(bad); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("damaged entry: %v", err)
	}
	if _, _, err := DecodeZKTxnLog([]byte("not a log at all, no")); err == nil {
		t.Fatal("a file without the magic number was accepted")
	}
}

// zkTxnHistory keeps what a majority of the servers logged: a proposal
// that only one server holds was never committed.
func TestZKTxnHistoryMajority(t *testing.T) {
	a := ZKTxn{Zxid: 1, Op: zkOpSetData, Path: "/x", Data: []byte("1")}
	b := ZKTxn{Zxid: 2, Op: zkOpSetData, Path: "/x", Data: []byte("2")}
	c := ZKTxn{Zxid: 3, Op: zkOpSetData, Path: "/x", Data: []byte("3")}
	stale := ZKTxn{Zxid: 4, Op: zkOpSetData, Path: "/x", Data: []byte("9")}
	got := zkTxnHistory([][]ZKTxn{{a, b, c, stale}, {a, c}, {b, c}})
	var zxids []int64
	for _, t := range got {
		zxids = append(zxids, t.Zxid)
	}
	if len(zxids) != 3 || zxids[0] != 1 || zxids[1] != 2 || zxids[2] != 3 {
		t.Fatalf("history %v, want zxids 1, 2, 3", zxids)
	}
	if got := zkTxnHistory([][]ZKTxn{{a, stale}}); len(got) != 2 {
		t.Fatalf("one server: every transaction counts, got %d", len(got))
	}
}

// zkCommits marks each commit with its writer and whether the writer held
// the owner node, following creates, deletes and session closes.
func TestZKCommitsOwnership(t *testing.T) {
	const chroot = "/kafka"
	g := "g"
	off := chroot + zkutil.OffsetPath(g, "t", 0)
	owner := chroot + zkutil.OwnerPath(g, "t", 0)
	ms := func(zxid int64) int64 { return 1000 + zxid }
	history := []ZKTxn{
		{Session: 1, Zxid: 1, Op: zkOpCreate, Path: chroot + zkutil.ConsumerIDPath(g, "c1"), Ephemeral: true},
		{Session: 1, Zxid: 2, Op: zkOpCreate, Path: owner, Data: []byte("c1-0"), Ephemeral: true},
		{Session: 1, Zxid: 3, Op: zkOpCreate, Path: off, Data: []byte("5")},
		{Session: 1, Zxid: 4, Op: zkOpSetData, Path: off, Data: []byte("9")},
		{Session: 2, Zxid: 5, Op: zkOpSetData, Path: off, Data: []byte("7")}, // not the owner
		{Session: 1, Zxid: 6, Op: zkOpCloseSession},
		{Session: 1, Zxid: 7, Op: zkOpSetData, Path: off, Data: []byte("12")}, // impossible in ZooKeeper, but marked
		{Session: 3, Zxid: 8, Op: zkOpSetData, Path: chroot + zkutil.OffsetPath(g, "u", 2), Data: []byte("1")},
		{Session: 3, Zxid: 9, Op: zkOpCreate, Path: chroot + zkutil.OffsetsTopicPath(g, "v"), Data: nil},
	}
	for i := range history {
		history[i].Time = ms(history[i].Zxid)
	}
	got := zkCommits(history, chroot, g)
	type want struct {
		offset   int64
		consumer string
		notOwner string
	}
	wants := []want{{5, "c1", ""}, {9, "c1", ""}, {7, "", "owner node held by c1-0 (session 0x1)"}, {12, "c1", "no owner node"}, {1, "", "no owner node"}}
	if len(got) != len(wants) {
		t.Fatalf("%d commits, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		if got[i].Offset != w.offset || got[i].Consumer != w.consumer || got[i].NotOwner != w.notOwner {
			t.Errorf("commit %d: %+v, want %+v", i, got[i], w)
		}
	}
	if got[0].Time != int64(1003*time.Millisecond) || got[0].Order != 3 || got[0].Topic != "t" || got[3].Session != 1 {
		t.Errorf("commit 0: %+v", got[0])
	}
}

func FuzzDecodeZKTxnLog(f *testing.F) {
	f.Add(txnLog(create(1, 1, "/a", "x", true), multi(1, 2, "/a", "/b", "1"), closeSession(1, 3)))
	f.Add(txnLog())
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = DecodeZKTxnLog(data)
	})
}

func FuzzDecodeOffsetCommit(f *testing.F) {
	w := &kafkaWriter{}
	w.offsetKey(1, "g", "t", 3)
	v := &kafkaWriter{}
	v.offsetValue(3, 42, 1700000000000)
	f.Add(w.b, v.b)
	f.Add(w.b, []byte(nil))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		_, _ = DecodeOffsetCommit(key, value)
	})
}
