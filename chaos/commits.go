package chaos

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Files of the committed-offset observation.
const (
	// commitsFile holds every committed offset the offset store applied
	// during the run (CommitRecord), read after the run from ZooKeeper's
	// transaction logs or from __consumer_offsets.
	commitsFile = "commits.jsonl"
	// observationFile describes how commitsFile was made
	// (CommitObservation).
	observationFile = "observation.json"
)

// Offset stores, as CommitRecord.Store and RunInfo.OffsetsStorage name them.
const (
	storeZooKeeper = "zookeeper"
	storeKafka     = "kafka"
)

// CommitRecord is one committed offset as the offset store applied it.
type CommitRecord struct {
	// Store is "zookeeper" (/consumers/<group>/offsets) or "kafka"
	// (__consumer_offsets).
	Store string `json:"store"`
	// Order orders the commits of a partition: the zxid in ZooKeeper, the
	// offset of the record in its __consumer_offsets partition in Kafka.
	Order int64 `json:"order"`
	// Time is when the store applied the commit (ZooKeeper: the leader's
	// clock when it accepted the transaction; Kafka: the commit timestamp
	// the coordinator wrote), Unix nanoseconds with millisecond precision.
	Time      int64  `json:"time"`
	Topic     string `json:"t"`
	Partition int32  `json:"p"`
	// Offset is the next offset to consume; -1 with Deleted.
	Offset int64 `json:"o"`
	// Deleted reports a deletion of the committed offset (a ZooKeeper
	// delete, a Kafka tombstone).
	Deleted bool `json:"deleted,omitempty"`
	// Session is the ZooKeeper session that wrote it and Consumer the
	// consumer id that session registered, if it registered one.
	Session  int64  `json:"session,omitempty"`
	Consumer string `json:"consumer,omitempty"`
	// NotOwner, in ZooKeeper, says why the writing session did not hold
	// the partition's owner node when the write was applied; empty when
	// it did.
	NotOwner string `json:"not_owner,omitempty"`
}

func (c CommitRecord) tp() topicPartition { return topicPartition{c.Topic, c.Partition} }

// CommitObservation describes how the committed offsets were observed.
type CommitObservation struct {
	// Store is the offset store read: "zookeeper" or "kafka".
	Store string `json:"store"`
	// Source names what was read (the servers' log directories, or
	// __consumer_offsets and its partitions).
	Source []string `json:"source"`
	// Entries counts the transactions or records read in all.
	Entries int `json:"entries"`
	// Commits counts the commits of the group found.
	Commits int `json:"commits"`
	// Partial counts ZooKeeper log entries cut short by a killed server
	// (harmless: a majority of the servers has every committed one).
	Partial int `json:"partial,omitempty"`
	// Final maps "topic-partition" to the committed offset read from the
	// store at the end of the run; the last observed commit of every
	// partition must equal it.
	Final map[string]int64 `json:"final"`
	// Problems are reasons why the observation may have missed commits;
	// any makes the run fail.
	Problems []string `json:"problems,omitempty"`
}

// zkCommits extracts the group's commits from the merged transaction
// history of the ensemble (zkTxnHistory). Paths carry the chroot of the
// members' connect string. Each commit is marked with the session that
// wrote it, the consumer id that session registered, and whether that
// session held the owner node of the partition at that moment: owner
// nodes are ephemeral, created by the claiming session and deleted by a
// release or with their session.
func zkCommits(history []ZKTxn, chroot, group string) []CommitRecord {
	idsPrefix := chroot + zkutil.ConsumerIDsPath(group) + "/"
	ownersPrefix := chroot + zkutil.OwnersPath(group) + "/"
	offsetsPrefix := chroot + zkutil.OffsetsPath(group) + "/"
	consumerOf := map[int64]string{}        // session -> registered consumer id
	owner := map[topicPartition]int64{}     // owner node -> session holding it
	ownerIDs := map[topicPartition]string{} // owner node -> its thread id
	var out []CommitRecord
	for _, t := range history {
		switch t.Op {
		case zkOpCloseSession:
			for tp, s := range owner {
				if s == t.Session {
					delete(owner, tp)
					delete(ownerIDs, tp)
				}
			}
			continue
		case zkOpCreate, zkOpCreate2, zkOpCreateContainer, zkOpCreateTTL, zkOpSetData, zkOpDelete:
		default:
			continue
		}
		switch {
		case strings.HasPrefix(t.Path, idsPrefix):
			if t.Op != zkOpDelete && t.Op != zkOpSetData {
				consumerOf[t.Session] = strings.TrimPrefix(t.Path, idsPrefix)
			}
		case strings.HasPrefix(t.Path, ownersPrefix):
			tp, ok := splitTP(strings.TrimPrefix(t.Path, ownersPrefix))
			if !ok {
				continue
			}
			if t.Op == zkOpDelete {
				delete(owner, tp)
				delete(ownerIDs, tp)
			} else if t.Ephemeral {
				owner[tp], ownerIDs[tp] = t.Session, string(t.Data)
			}
		case strings.HasPrefix(t.Path, offsetsPrefix):
			tp, ok := splitTP(strings.TrimPrefix(t.Path, offsetsPrefix))
			if !ok {
				continue
			}
			c := CommitRecord{Store: storeZooKeeper, Order: t.Zxid, Time: t.Time * int64(time.Millisecond),
				Topic: tp.Topic, Partition: tp.Partition, Session: t.Session, Consumer: consumerOf[t.Session]}
			if t.Op == zkOpDelete {
				c.Offset, c.Deleted = -1, true
			} else {
				off, err := zkutil.DecodeOffset(t.Path, t.Data)
				if err != nil {
					c.Offset, c.NotOwner = -1, "unreadable offset: "+err.Error()
					out = append(out, c)
					continue
				}
				c.Offset = off
			}
			switch s, held := owner[tp]; {
			case !held:
				c.NotOwner = "no owner node"
			case s != t.Session:
				c.NotOwner = fmt.Sprintf("owner node held by %s (session %s)", ownerIDs[tp], sessionHex(s))
			}
			out = append(out, c)
		}
	}
	return out
}

// splitTP parses "<topic>/<partition>".
func splitTP(s string) (topicPartition, bool) {
	i := strings.LastIndexByte(s, '/')
	if i <= 0 {
		return topicPartition{}, false
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || strings.IndexByte(s[:i], '/') >= 0 {
		return topicPartition{}, false
	}
	return topicPartition{s[:i], int32(p)}, true
}

func sessionHex(s int64) string { return "0x" + strconv.FormatUint(uint64(s), 16) }

// readZKCommits reads the transaction logs of every server (dirs: each
// server's dataDir/version-2) and returns the group's commits and how they
// were observed.
func readZKCommits(dirs []string, chroot, group string) ([]CommitRecord, CommitObservation, error) {
	obs := CommitObservation{Store: storeZooKeeper, Source: dirs}
	if len(dirs) == 0 {
		return nil, obs, errors.New("chaos: no ZooKeeper transaction log directory found")
	}
	var servers [][]ZKTxn
	for _, d := range dirs {
		txns, partial, err := ReadZKTxnLogDir(d)
		if err != nil {
			return nil, obs, err
		}
		if len(txns) == 0 {
			obs.Problems = append(obs.Problems, fmt.Sprintf("%s holds no transaction", d))
		}
		obs.Entries += len(txns)
		obs.Partial += partial
		servers = append(servers, txns)
	}
	history := zkTxnHistory(servers)
	commits := zkCommits(history, chroot, group)
	obs.Commits = len(commits)
	return commits, obs, nil
}

// checkFinal compares the last observed commit of every partition with the
// committed offsets read from the store at the end (obs.Final) and adds a
// problem for each difference: a difference means commits were missed.
func (obs *CommitObservation) checkFinal(commits []CommitRecord) {
	last := map[string]int64{}
	for _, c := range commits {
		last[c.tp().String()] = c.Offset
	}
	for _, tp := range slices.Sorted(mapKeys(obs.Final)) {
		want := obs.Final[tp]
		got, ok := last[tp]
		switch {
		case !ok:
			obs.Problems = append(obs.Problems, fmt.Sprintf("%s: committed offset %d at the end, but no commit of it observed", tp, want))
		case got != want:
			obs.Problems = append(obs.Problems, fmt.Sprintf("%s: committed offset %d at the end, but the last commit observed is %d", tp, want, got))
		}
	}
	for _, tp := range slices.Sorted(mapKeys(last)) {
		if _, ok := obs.Final[tp]; !ok && last[tp] >= 0 {
			obs.Problems = append(obs.Problems, fmt.Sprintf("%s: commit of %d observed, but no committed offset at the end", tp, last[tp]))
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// saveCommits writes commitsFile and observationFile.
func saveCommits(dir string, commits []CommitRecord, obs CommitObservation) error {
	if err := writeJSONLines(filepath.Join(dir, commitsFile), commits); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, observationFile), obs)
}

// loadCommits reads commitsFile and observationFile.
func loadCommits(dir string) ([]CommitRecord, CommitObservation, error) {
	var obs CommitObservation
	data, err := os.ReadFile(dir + "/" + observationFile)
	if err != nil {
		return nil, obs, err
	}
	if err := json.Unmarshal(data, &obs); err != nil {
		return nil, obs, fmt.Errorf("chaos: %s: %w", observationFile, err)
	}
	var commits []CommitRecord
	if err := readJSONLines(filepath.Join(dir, commitsFile), &commits); err != nil {
		return nil, obs, err
	}
	return commits, obs, nil
}
