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

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
