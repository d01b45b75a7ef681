//go:build race

package examples_test

// raceEnabled builds the examples with -race when the tests run with it.
const raceEnabled = true
