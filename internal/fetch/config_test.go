package fetch

import (
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	for name, mutate := range map[string]func(*Config){
		"negative min bytes":   func(c *Config) { c.FetchMinBytes = -1 },
		"negative wait":        func(c *Config) { c.FetchWaitMax = -time.Millisecond },
		"wait above timeout":   func(c *Config) { c.FetchWaitMax = time.Minute },
		"negative timeout":     func(c *Config) { c.SocketTimeout = -time.Second },
		"negative backoff":     func(c *Config) { c.RefreshLeaderBackoff = -time.Second },
		"negative fetchers":    func(c *Config) { c.NumFetchers = -1 },
		"negative decoding":    func(c *Config) { c.MaxDecodedBytes = -1 },
		"new consumer's reset": func(c *Config) { c.AutoOffsetReset = "earliest" },
		"unknown isolation":    func(c *Config) { c.IsolationLevel = "serializable" },
		"bad sarama config": func(c *Config) {
			c.Sarama = sarama.NewConfig()
			c.Sarama.Net.SASL.Enable = true // without a mechanism's credentials
		},
	} {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: Validate = %v, want ErrInvalidConfig", name, err)
		}
		if _, err := NewConsumerFetcherManager(c, staticBrokers{}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: NewConsumerFetcherManager = %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := NewConsumerFetcherManager(DefaultConfig(), nil); err == nil {
		t.Error("nil BrokerSource accepted")
	}
}

func TestSaramaConfig(t *testing.T) {
	c := DefaultConfig().withDefaults()
	c.ClientID = "group-1"
	sc := c.saramaConfig()
	if sc.Version != sarama.V3_9_0_0 || sc.ClientID != "group-1" {
		t.Errorf("version %v client %q", sc.Version, sc.ClientID)
	}
	if sc.Net.ReadTimeout != c.SocketTimeout+c.FetchWaitMax || sc.Net.DialTimeout != c.SocketTimeout {
		t.Errorf("timeouts %v %v", sc.Net.ReadTimeout, sc.Net.DialTimeout)
	}
	if got := fetchVersion(sc.Version); got != 12 {
		t.Errorf("fetch version %d, want 12", got)
	}
	// A user's config pins the version and is not modified.
	user := sarama.NewConfig()
	user.Version = sarama.V0_10_1_0
	c.Sarama = user
	sc = c.saramaConfig()
	if fetchVersion(sc.Version) != 3 || user.ClientID == "group-1" {
		t.Errorf("fetch version %d, user config modified: %v", fetchVersion(sc.Version), user.ClientID)
	}
	if got := fetchVersion(sarama.V0_11_0_0); got != 5 {
		t.Errorf("0.11: fetch version %d", got)
	}
}
