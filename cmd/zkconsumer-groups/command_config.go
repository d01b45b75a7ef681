package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/secure"
)

// loadCommandConfig reads --command-config, like Kafka's tools: the
// security settings of the connections. Keys it does not use are reported
// on stderr. No file means PLAINTEXT without credentials (the
// ZKCONSUMER_ZOOKEEPER_AUTH environment variable still applies).
func loadCommandConfig(path string, stderr io.Writer) (secure.Settings, *secure.Client, error) {
	var s secure.Settings
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return s, nil, fmt.Errorf("--command-config: %w", err)
		}
		props, err := connector.ParseProperties(f)
		f.Close()
		if err != nil {
			return s, nil, fmt.Errorf("--command-config %s: %w", path, err)
		}
		if err := s.SetProperties(props); err != nil {
			return s, nil, fmt.Errorf("--command-config %s: %w", path, err)
		}
		known := secure.Keys()
		var ignored []string
		for k := range props {
			if !slices.Contains(known, k) {
				ignored = append(ignored, k)
			}
		}
		slices.Sort(ignored)
		for _, k := range ignored {
			fmt.Fprintf(stderr, "Warning: --command-config: %s is not a security setting and is ignored\n", k)
		}
	}
	sec, err := secure.New(s)
	if err != nil {
		return s, nil, fmt.Errorf("--command-config %s: %w", path, err)
	}
	return s, sec, nil
}
