package host_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/zealgo/zealgo/host"
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
		app := host.New()
		app.Symbols(symbols.Symbols)
		os.Exit(app.Run(context.Background(), []string{"worker"}, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
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
