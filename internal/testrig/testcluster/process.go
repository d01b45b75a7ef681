package testcluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// jvm is one Java process of the cluster, running in its own process group.
type jvm struct {
	name    string
	args    []string // everything after "java"
	logPath string
	detach  bool // survive the parent (make cluster-up)

	cmd      *exec.Cmd
	pid      int
	done     chan struct{} // closed when an attached process has exited
	logStart int64         // size of the log when the process started
}

// start launches the JVM. Its output goes to logPath.
func (j *jvm) start() error {
	logFile, err := os.OpenFile(j.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	if fi, err := logFile.Stat(); err == nil {
		j.logStart = fi.Size()
	}
	cmd := exec.Command("java", j.args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if !j.detach {
		// A crashed test binary must not leave JVMs behind.
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testcluster: start %s: %w", j.name, err)
	}
	j.cmd, j.pid = cmd, cmd.Process.Pid
	j.done = make(chan struct{})
	if j.detach {
		// Nobody waits for a detached process; release it so the
		// parent can exit while it keeps running.
		_ = cmd.Process.Release()
		close(j.done)
		return nil
	}
	go func() {
		_ = cmd.Wait()
		close(j.done)
	}()
	return nil
}

// running reports whether the process is alive.
func (j *jvm) running() bool {
	if j.pid == 0 {
		return false
	}
	if !j.detach {
		select {
		case <-j.done:
			return false
		default:
			return true
		}
	}
	return pidAlive(j.pid)
}

// signal sends sig to the JVM's whole process group.
func (j *jvm) signal(sig syscall.Signal) error {
	if j.pid == 0 {
		return fmt.Errorf("testcluster: %s is not running", j.name)
	}
	if err := syscall.Kill(-j.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("testcluster: signal %v to %s: %w", sig, j.name, err)
	}
	return nil
}

// stop ends the process: sig first, SIGKILL after grace, then waits until it
// is gone.
func (j *jvm) stop(sig syscall.Signal, grace time.Duration) error {
	if !j.running() {
		return nil
	}
	_ = j.signal(syscall.SIGCONT) // a paused JVM cannot handle SIGTERM
	if err := j.signal(sig); err != nil {
		return err
	}
	if j.waitGone(grace) {
		return nil
	}
	_ = j.signal(syscall.SIGKILL)
	if j.waitGone(30 * time.Second) {
		return nil
	}
	return fmt.Errorf("testcluster: %s (pid %d) did not exit", j.name, j.pid)
}

func (j *jvm) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if !j.running() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pidAlive reports whether pid exists and is not a zombie.
func pidAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// pidCmdlineContains reports whether the command line of pid mentions s; it
// guards against signalling a recycled pid.
func pidCmdlineContains(pid int, s string) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(data), s)
}

// logSinceStart is what the process wrote to its log since it was last
// started (at most the last 64 KiB of it).
func (j *jvm) logSinceStart() string {
	f, err := os.Open(j.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	from := j.logStart
	if fi, err := f.Stat(); err == nil && fi.Size()-from > 64<<10 {
		from = fi.Size() - 64<<10
	}
	data, _ := io.ReadAll(io.NewSectionReader(f, from, 1<<62))
	return string(data)
}

// freeze sends SIGSTOP and waits, up to timeout, until every thread of the
// process is stopped. The signal stops each thread only when the kernel
// next runs it: on a loaded machine a thread can still answer a request
// for a moment after kill returned (a paused ZooKeeper server answered a
// mode query under load average 40), so a pause counts only once it took.
func (j *jvm) freeze(timeout time.Duration) error {
	if err := j.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for !allThreadsStopped(j.pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("testcluster: %s (pid %d) not stopped %v after SIGSTOP", j.name, j.pid, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// allThreadsStopped reports whether every thread of process pid is in
// the stopped state (T), or the process is gone.
func allThreadsStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return true // gone: nothing of it runs
	}
	for _, task := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			continue // the thread ended
		}
		// The state follows the command name, which is in parentheses
		// and may itself hold spaces or parentheses.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			return false
		}
		if st := s[i+2]; st != 'T' && st != 't' && st != 'Z' && st != 'X' {
			return false
		}
	}
	return true
}
