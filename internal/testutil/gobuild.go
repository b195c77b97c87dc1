package testutil

import "os"

// BuildStatic makes the go commands that this test binary and the
// programs it starts run (go build, go test, go vet, go list -export,
// zealgo build) build as zealgo build does, without cgo
// (CGO_ENABLED=0): they then find in the build cache what zealgo build
// and .ci/run's build, vet and staticcheck compiled, instead of
// compiling every package a second way. A test that runs `go test -race`
// sets CGO_ENABLED=1 for it: the race detector needs cgo. TestMain calls
// it.
func BuildStatic() {
	os.Setenv("CGO_ENABLED", "0")
}
