// Package layering holds a test that keeps the module's data flowing one
// way: connector -> rebalance -> fetcher -> stream, with zkutil beneath.
package layering
