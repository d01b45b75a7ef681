// A test-only module, never published: it checks that the modules this
// repository publishes can be fetched with `go get` from published
// versions alone (see docs/RELEASING.md). It is a module of its own so
// that golang.org/x/mod stays out of the published modules' requirements,
// and it is not part of the repository's go.work: run it with GOWORK=off
// (scripts/test.sh does).
module github.com/zkconsumer/zkconsumer/scripts/gettable

go 1.26.0

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/mod v0.42.0
)
