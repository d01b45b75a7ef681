package testcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// RepoRoot finds the zkconsumer checkout that contains the working
// directory: the nearest ancestor with go.mod and testinfra/.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) && fileExists(filepath.Join(dir, "testinfra", "fetch-jars.sh")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testcluster: not inside the zkconsumer repository (no go.mod with testinfra/ above the working directory)")
		}
		dir = parent
	}
}

// Kafka39Lib is the directory holding the Kafka 3.9 broker's jars.
func Kafka39Lib() (string, error) { return libDir("kafka39") }

// Kafka111Lib is the directory holding Kafka 1.1.1's Scala tools' jars.
func Kafka111Lib() (string, error) { return libDir("kafka111") }

// Kafka4Lib is the directory holding the Kafka 4.x (KRaft) broker's and
// tools' jars.
func Kafka4Lib() (string, error) { return libDir("kafka4") }

func libDir(name string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", name, "lib")
	if !fileExists(filepath.Join(dir, ".stamp")) {
		return "", fmt.Errorf("testcluster: the %s jars are missing in %s: run `make jars` (testinfra/fetch-jars.sh) first", name, dir)
	}
	return dir, nil
}

// log4jConfig is the log4j configuration handed to every JVM.
func log4jConfig() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "testinfra", "log4j.properties"), nil
}

// log4j2Config is the log4j2 configuration of the Kafka 4.x JVMs; tools
// selects the one for command-line tools (warnings to stderr).
func log4j2Config(tools bool) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	name := "log4j2.properties"
	if tools {
		name = "log4j2-tools.properties"
	}
	return filepath.Join(root, "testinfra", name), nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
