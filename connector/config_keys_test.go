package connector

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPropertiesTableIsWhole: the table of keys declares each key once,
// with its default, parser and printer, and the keys of one coordination
// mode are keys of the table.
func TestPropertiesTableIsWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range properties {
		assert.False(t, seen[p.key], "%s is declared twice", p.key)
		seen[p.key] = true
		assert.NotNil(t, p.setDefault, p.key)
		assert.NotNil(t, p.set, p.key)
		assert.NotNil(t, p.get, p.key)
	}
	for _, k := range append(append([]string{}, zookeeperOnlyKeys...), kafkaOnlyKeys...) {
		assert.True(t, seen[k], "%s is not in the table", k)
	}
	// A derived key has no default of its own: DefaultConfig leaves it
	// unset, out of Properties.
	def := DefaultConfig()
	for _, p := range properties {
		if _, ok := p.get(&def); p.derived {
			assert.False(t, ok, "%s: set by DefaultConfig", p.key)
		}
	}
}
