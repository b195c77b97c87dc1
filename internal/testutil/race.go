//go:build race

package testutil

// Race reports whether this binary was built with the race detector: a
// test that runs `go test` or `go build` again passes -race when it is
// set, so that the build finds in the cache the packages the outer one
// compiled instead of compiling every one of them a second way.
const Race = true
