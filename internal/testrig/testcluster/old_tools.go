package testcluster

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// OldTool prepares a command running a main class from Kafka 1.1.1's Scala
// tools (kafka.tools.ConsoleConsumer, kafka.admin.ConsumerGroupCommand, ...),
// the reference implementation of the old consumer. The JVM runs in its own
// process group; cancelling ctx kills the whole group.
func OldTool(ctx context.Context, mainClass string, args ...string) (*exec.Cmd, error) {
	lib, err := Kafka111Lib()
	if err != nil {
		return nil, err
	}
	return log4jToolCmd(ctx, lib, mainClass, args)
}

// Tool prepares a command running a main class from Kafka 3.9's tools
// (org.apache.kafka.tools.consumer.ConsoleConsumer, the Java consumer of
// kafka-console-consumer.sh, ...), like OldTool.
func Tool(ctx context.Context, mainClass string, args ...string) (*exec.Cmd, error) {
	lib, err := Kafka39Lib()
	if err != nil {
		return nil, err
	}
	return log4jToolCmd(ctx, lib, mainClass, args)
}

// Tool4 prepares a command running a main class from Kafka 4.x's jars
// (org.apache.kafka.tools.consumer.ConsoleConsumer, kafka.tools.StorageTool,
// ...), like Tool. Kafka 4 logs through log4j2.
func Tool4(ctx context.Context, mainClass string, args ...string) (*exec.Cmd, error) {
	lib, err := Kafka4Lib()
	if err != nil {
		return nil, err
	}
	log4j2, err := log4j2Config(true)
	if err != nil {
		return nil, err
	}
	return toolCmd(ctx, lib, "-Dlog4j2.configurationFile="+log4j2, mainClass, args), nil
}

// log4jToolCmd is toolCmd with the log4j 1.x (reload4j) configuration of
// Kafka 1.1.1 and 3.9.
func log4jToolCmd(ctx context.Context, lib, mainClass string, args []string) (*exec.Cmd, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	log4j := filepath.Join(root, "testinfra", "log4j-tools.properties")
	return toolCmd(ctx, lib, "-Dlog4j.configuration=file:"+log4j, mainClass, args), nil
}

// toolCmd prepares a small-heap JVM running mainClass on the jars in lib,
// in its own process group; logFlag names the logging configuration.
func toolCmd(ctx context.Context, lib, logFlag, mainClass string, args []string) *exec.Cmd {
	jargs := append([]string{
		"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
		logFlag,
		"-cp", filepath.Join(lib, "*"), mainClass,
	}, args...)
	cmd := exec.CommandContext(ctx, "java", jargs...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// RunOldTool runs an OldTool command to completion and returns its stdout;
// stderr is included in the error when it fails.
func RunOldTool(ctx context.Context, mainClass string, args ...string) (string, error) {
	cmd, err := OldTool(ctx, mainClass, args...)
	if err != nil {
		return "", err
	}
	return runTool(cmd, mainClass)
}

// RunTool runs a Tool command to completion, like RunOldTool.
func RunTool(ctx context.Context, mainClass string, args ...string) (string, error) {
	cmd, err := Tool(ctx, mainClass, args...)
	if err != nil {
		return "", err
	}
	return runTool(cmd, mainClass)
}

// RunTool4 runs a Tool4 command to completion, like RunOldTool.
func RunTool4(ctx context.Context, mainClass string, args ...string) (string, error) {
	cmd, err := Tool4(ctx, mainClass, args...)
	if err != nil {
		return "", err
	}
	return runTool(cmd, mainClass)
}

func runTool(cmd *exec.Cmd, mainClass string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("testcluster: %s: %w\n%s", mainClass, err, stderr.String())
	}
	return stdout.String(), nil
}
