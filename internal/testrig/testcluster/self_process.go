package testcluster

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
)

// SelfProcess is this test binary started again as a separate OS process,
// to play a group member in another process. The child finds its task with
// SelfSpec in its TestMain.
type SelfProcess struct {
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
}

// StartSelf starts this test binary again, running no tests, with spec
// (JSON-encoded) in the environment variable env. The child dies with the
// test process; its stderr is the test's.
func StartSelf(t testing.TB, env string, spec any) *SelfProcess {
	t.Helper()
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+string(data))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &SelfProcess{Cmd: cmd}
	if p.Stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.Stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

// SelfSpec decodes the spec StartSelf passed in env into dst; ok is false
// in a process that was not started by StartSelf.
func SelfSpec(env string, dst any) (ok bool, err error) {
	data := os.Getenv(env)
	if data == "" {
		return false, nil
	}
	return true, json.Unmarshal([]byte(data), dst)
}

// LockedBuffer collects output that a test reads while it is written.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
