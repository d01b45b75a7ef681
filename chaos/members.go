package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Incarnation is one member process as the driver saw it: from its start to
// its exit, and why it ended.
type Incarnation struct {
	Slot     int    `json:"slot"`
	Inc      int    `json:"inc"`
	Wildcard bool   `json:"wildcard"`
	PID      int    `json:"pid"`
	Log      string `json:"log"`    // relative to the run directory
	Stderr   string `json:"stderr"` // relative to the run directory
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	ExitCode int    `json:"exit_code"` // -1 when ended by a signal
	Signal   string `json:"signal,omitempty"`
	// Ending says how the driver ended the process: "kill" (SIGKILL by a
	// fault), "leave" (SIGINT by a fault), "final" (SIGINT at the end of
	// the run), "forced" (SIGKILL after a SIGINT went unanswered); empty
	// when the process ended on its own.
	Ending string `json:"ending,omitempty"`
	// Fault is the fault that ended the process, if any.
	Fault int `json:"fault,omitempty"`
	// Panic and Race report "panic:" / "fatal error:" and data race
	// reports found in the process's stderr.
	Panic bool `json:"panic,omitempty"`
	Race  bool `json:"race,omitempty"`
	// HeartbeatGapMs is the longest gap between answered heartbeats to the
	// group coordinator (Kafka coordination) of the process's generations
	// that did not end with the membership lost, from the members' log
	// lines "heartbeats stopped" on stderr.
	HeartbeatGapMs int64 `json:"heartbeat_gap_ms,omitempty"`
	// LongGaps are the gaps between answered heartbeats that reached half
	// the session timeout ("heartbeats went unanswered"), as Unix
	// nanoseconds.
	LongGaps []Span `json:"long_gaps,omitempty"`
}

// Span is an interval in Unix nanoseconds.
type Span struct {
	From  int64 `json:"from"`
	Until int64 `json:"until"`
}

// Key names the incarnation: "m<slot>.<inc>".
func (i *Incarnation) Key() string { return fmt.Sprintf("m%d.%d", i.Slot, i.Inc) }

// process is a running or ended incarnation.
type process struct {
	Incarnation
	cmd  *exec.Cmd
	done chan struct{} // closed once Incarnation's exit fields are set
}

// memberSet starts, signals and restarts the member processes of the run.
type memberSet struct {
	dir     string
	command []string
	spec    func(slot, inc int) MemberSpec
	log     *slog.Logger
	// unexpected receives incarnations that exit without the driver asking.
	unexpected chan *process

	mu      sync.Mutex
	current []*process // by slot; nil before the first start
	all     []*process
	incs    []int // incarnations started, by slot
}

func newMemberSet(dir string, command []string, slots int, spec func(slot, inc int) MemberSpec, log *slog.Logger) *memberSet {
	return &memberSet{
		dir: dir, command: command, spec: spec, log: log,
		unexpected: make(chan *process, 64),
		current:    make([]*process, slots),
		incs:       make([]int, slots),
	}
}

// start launches a new incarnation of slot unless one is running; with
// replace it launches one anyway (a static member's replacement), which
// becomes the slot's current incarnation.
func (s *memberSet) start(slot int, replace bool) (*process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.current[slot]; p != nil && !p.ended() && !replace {
		return p, nil
	}
	s.incs[slot]++
	inc := s.incs[slot]
	spec := s.spec(slot, inc)
	name := fmt.Sprintf("m%d.%d", slot, inc)
	spec.LogPath = filepath.Join(s.dir, "members", name+".jsonl")
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	stderrPath := filepath.Join(s.dir, "members", name+".stderr")
	stderr, err := os.Create(stderrPath)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	cmd := exec.Command(s.command[0], s.command[1:]...)
	cmd.Env = append(os.Environ(), MemberEnv+"="+string(data))
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	// Its own process group, so that signals reach only it; it dies with
	// the driver.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("chaos: start member %s: %w", name, err)
	}
	p := &process{
		Incarnation: Incarnation{
			Slot: slot, Inc: inc, Wildcard: spec.Whitelist != "", PID: cmd.Process.Pid,
			Log: filepath.Join("members", name+".jsonl"), Stderr: filepath.Join("members", name+".stderr"),
			Start: time.Now().UnixNano(),
		},
		cmd: cmd, done: make(chan struct{}),
	}
	s.current[slot] = p
	s.all = append(s.all, p)
	s.log.Info("member started", "member", name, "pid", p.PID)
	go s.wait(p, stderrPath)
	return p, nil
}

// wait reaps p and records how it ended.
func (s *memberSet) wait(p *process, stderrPath string) {
	err := p.cmd.Wait()
	end := time.Now().UnixNano()
	sc := scanStderr(stderrPath)
	s.mu.Lock()
	p.End = end
	p.Panic, p.Race, p.HeartbeatGapMs, p.LongGaps = sc.panicked, sc.raced, sc.heartbeatGap.Milliseconds(), sc.longGaps
	p.ExitCode = p.cmd.ProcessState.ExitCode()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		p.Signal = ws.Signal().String()
	}
	ending := p.Ending
	s.mu.Unlock()
	expected := ending != ""
	close(p.done)
	level := slog.LevelInfo
	if !expected {
		level = slog.LevelWarn
	}
	s.log.Log(context.Background(), level, "member exited", "member", p.Key(), "code", p.ExitCode, "signal", p.Signal, "ending", ending, "err", err)
	if !expected {
		select {
		case s.unexpected <- p:
		default: // nobody restarts members any more
		}
	}
}

func (p *process) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// scanStderr looks for a Go panic or fatal error and for race reports.
// stderrScan is what scanStderr finds in a member's stderr.
type stderrScan struct {
	panicked, raced bool
	heartbeatGap    time.Duration // the longest of generations that kept their membership
	longGaps        []Span
}

func scanStderr(path string) (out stderrScan) {
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "panic: "), strings.HasPrefix(line, "fatal error: "),
			strings.Contains(line, "chaos member: recovered panic"):
			out.panicked = true
		case strings.HasPrefix(line, "WARNING: DATA RACE"):
			out.raced = true
		case strings.Contains(line, `msg="heartbeats stopped"`) && !strings.Contains(line, " lost=true"):
			out.heartbeatGap = max(out.heartbeatGap, heartbeatGapOf(line))
		case strings.Contains(line, `msg="heartbeats went unanswered"`):
			from, ok1 := timeAttr(line, "gap_from=")
			until, ok2 := timeAttr(line, "gap_until=")
			if ok1 && ok2 {
				out.longGaps = append(out.longGaps, Span{From: from, Until: until})
			}
		}
	}
	return out
}

// timeAttr reads an RFC 3339 time attribute of a log line as Unix
// nanoseconds.
func timeAttr(line, key string) (int64, bool) {
	_, v, ok := strings.Cut(line, key)
	if !ok {
		return 0, false
	}
	v, _, _ = strings.Cut(v, " ")
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, false
	}
	return t.UnixNano(), true
}

// heartbeatGapOf reads longest_heartbeat_gap=<duration> from a member's
// log line; 0 when it has none.
func heartbeatGapOf(line string) time.Duration {
	_, v, ok := strings.Cut(line, "longest_heartbeat_gap=")
	if !ok {
		return 0
	}
	v, _, _ = strings.Cut(v, " ")
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0
	}
	return d
}

// get returns the current incarnation of slot.
func (s *memberSet) get(slot int) *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current[slot]
}

// signal sends sig to incarnation p (from get, say) and, when ending is
// set, marks the exit as the driver's doing (before the signal, so the
// exit is never taken for an unexpected one).
func (s *memberSet) signal(p *process, sig syscall.Signal, ending string, fault int) (*process, error) {
	s.mu.Lock()
	if p == nil || p.ended() {
		s.mu.Unlock()
		return p, errors.New("chaos: the member is not running")
	}
	if ending != "" && p.Ending == "" {
		p.Ending, p.Fault = ending, fault
	}
	s.mu.Unlock()
	if err := syscall.Kill(p.PID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return p, fmt.Errorf("chaos: %v to member %s: %w", sig, p.Key(), err)
	}
	return p, nil
}

// stopAll interrupts every running member and waits up to timeout for each
// to exit; those that do not are killed (ending "forced").
func (s *memberSet) stopAll(timeout time.Duration) {
	s.mu.Lock()
	var running []*process
	for _, p := range s.all {
		if !p.ended() {
			running = append(running, p)
		}
	}
	s.mu.Unlock()
	for _, p := range running {
		_ = syscall.Kill(p.PID, syscall.SIGCONT)
		if _, err := s.signal(p, syscall.SIGINT, "final", 0); err != nil {
			s.log.Warn("stop member", "member", p.Key(), "err", err)
		}
	}
	deadline := time.After(timeout)
	for _, p := range running {
		select {
		case <-p.done:
		case <-deadline:
		}
	}
	s.killRemaining()
}

// killRemaining kills every member still running and waits for it.
func (s *memberSet) killRemaining() {
	s.mu.Lock()
	var left []*process
	for _, p := range s.all {
		if !p.ended() {
			if p.Ending == "" || p.Ending == "final" || p.Ending == "leave" {
				p.Ending = "forced"
			}
			left = append(left, p)
		}
	}
	s.mu.Unlock()
	for _, p := range left {
		s.log.Warn("killing member that did not exit", "member", p.Key())
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
		_ = syscall.Kill(p.PID, syscall.SIGCONT)
		<-p.done
	}
}

// incarnations returns a copy of every incarnation started so far.
func (s *memberSet) incarnations() []Incarnation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Incarnation, len(s.all))
	for i, p := range s.all {
		out[i] = p.Incarnation
	}
	return out
}

// running returns the current incarnations that have not exited.
func (s *memberSet) running() []*process {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*process
	for _, p := range s.current {
		if p != nil && !p.ended() {
			out = append(out, p)
		}
	}
	return out
}

// killRemainingOf kills p, which did not exit when asked, and waits for it.
func (s *memberSet) killRemainingOf(p *process) {
	s.mu.Lock()
	p.Ending = "forced"
	s.mu.Unlock()
	s.log.Warn("killing member that did not exit", "member", p.Key())
	_ = syscall.Kill(p.PID, syscall.SIGKILL)
	_ = syscall.Kill(p.PID, syscall.SIGCONT)
	<-p.done
}
