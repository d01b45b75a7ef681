package testcluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// ClientProgram prepares a command running the single-file Java program
// source (java's source-file mode: compiled in memory at start) with the
// jars of a Kafka release on its class path: release "3.9" (Kafka39Lib,
// log4j 1.x) or "4" (Kafka4Lib, log4j2); warnings are logged to stderr.
// Unlike Tool's JVM, which is sized for short command-line runs (C1 only,
// serial GC), this one runs with the JVM's default compilers and collector,
// as an application's Kafka client would, on a heap of up to 512 MiB. The
// JVM runs in its own process group; cancelling ctx kills the whole group.
func ClientProgram(ctx context.Context, release, source string, args ...string) (*exec.Cmd, error) {
	var lib, logFlag string
	var err error
	switch release {
	case "3.9":
		if lib, err = Kafka39Lib(); err != nil {
			return nil, err
		}
		root, err := RepoRoot()
		if err != nil {
			return nil, err
		}
		logFlag = "-Dlog4j.configuration=file:" + filepath.Join(root, "testinfra", "log4j-tools.properties")
	case "4":
		if lib, err = Kafka4Lib(); err != nil {
			return nil, err
		}
		log4j2, err := log4j2Config(true)
		if err != nil {
			return nil, err
		}
		logFlag = "-Dlog4j2.configurationFile=" + log4j2
	default:
		return nil, fmt.Errorf("testcluster: ClientProgram: release %q: want \"3.9\" or \"4\"", release)
	}
	src, err := filepath.Abs(source)
	if err != nil {
		return nil, err
	}
	jargs := append([]string{"-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", logFlag,
		"-cp", filepath.Join(lib, "*"), src}, args...)
	cmd := exec.CommandContext(ctx, "java", jargs...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd, nil
}
