package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/zealgo/zealgo/internal/testutil"
)

// buildDir holds the builds that the tests running the sample as a
// program share (TestContainerRecipe, TestSampleDurability,
// TestSampleBuilt), and the profile of the browser tests' Chromium
// (browser_test.go): made once per test binary, removed when it ends.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zealgo-sample-build")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	testutil.BuildStatic()
	code := m.Run()
	stopChromium() // the browser tests' (browser_test.go), whose profile is in dir
	os.RemoveAll(dir)
	os.Exit(code)
}

// sampleCommand builds the sample's command once, as the Dockerfile's
// build stage does (CGO_ENABLED=0 go build -mod=mod ./sample) but without
// -trimpath and -ldflags, which change no behaviour: it then shares the
// build cache with zealgo build's own compilations (CGO_ENABLED=0,
// -mod=mod) instead of compiling every dependency once more.
var sampleCommand = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(buildDir, "zealgo")
	build := exec.Command("go", "build", "-mod=mod", "-o", bin, "./sample")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// sampleBinary returns the sample's command (sampleCommand), built by the
// first test that asks.
func sampleBinary(t *testing.T) string {
	t.Helper()
	bin, err := sampleCommand()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// genMu guards genDir, the directory where zealgo build generates the
// sample's compiled program for TestSampleBuilt and TestContainerRecipe
// in turn: the same generated packages at the same paths, so the second
// build finds the first one's compiled packages in the build cache and
// compiles only its main package.
var genMu sync.Mutex

func genDir() string { return filepath.Join(buildDir, "gen") }
