package host_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

// taskWorkerEnv, set to 1, makes this test binary a task worker instead
// of running the tests: the task tests start it through
// Config.WorkerCommand, as a server starts its own executable.
const taskWorkerEnv = "ZEALGO_TEST_TASK_WORKER"

// workerBlockEnv names a file: while it exists, a task worker started by
// the tests exits at once, as a worker that cannot start would.
const workerBlockEnv = "ZEALGO_TEST_WORKER_BLOCK"

// TestMain runs the tests, or, in a process started by
// testWorkerCommand, the worker role of an application configured as the
// tests configure theirs. Nothing changes for tests that start no task
// workers.
func TestMain(m *testing.M) {
	if os.Getenv(taskWorkerEnv) == "1" {
		if block := os.Getenv(workerBlockEnv); block != "" {
			if _, err := os.Stat(block); err == nil {
				os.Exit(1)
			}
		}
		stop := workerProfile()
		app := host.New()
		app.Symbols(symbols.Symbols)
		code := app.Run(context.Background(), []string{"worker"}, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	testutil.BuildStatic()
	os.Exit(m.Run())
}

// workerProfileEnv names a directory: a task worker started by the tests
// writes its CPU profile there (worker-PID.prof), for profiling the
// benchmarks' worker processes.
const workerProfileEnv = "ZEALGO_TEST_WORKER_CPUPROFILE"

// workerProfile starts the CPU profile of a worker process when
// workerProfileEnv is set, and returns what stops it.
func workerProfile() (stop func()) {
	dir := os.Getenv(workerProfileEnv)
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%d.prof", os.Getpid())))
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// testWorkerCommand starts this test binary as a task worker.
func testWorkerCommand() *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), taskWorkerEnv+"=1")
	return cmd
}
