package testcluster

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// PeakRSS returns the peak resident set size (VmHWM) in bytes of the
// process whose /proc status file is path ("/proc/self/status",
// "/proc/<pid>/status"), 0 if it cannot be read.
func PeakRSS(path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscan(rest, &kb); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// WatchPeakRSS records the peak resident set size of process pid in *hwm,
// read from /proc every 5ms, until stop is called. A child's own rusage
// cannot be used instead: Go starts it sharing the parent's memory until
// exec, so its ru_maxrss reports the parent's peak if that is larger.
func WatchPeakRSS(pid int, hwm *int64) (stop func()) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			*hwm = max(*hwm, PeakRSS(path))
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(quit); <-done }
}
