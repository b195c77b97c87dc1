package taskpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/taskproto"
)

// workerEnv, set to 1, makes this test binary a task worker (testRunner)
// instead of running the tests.
const workerEnv = "ZEALGO_TEST_TASKPOOL_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		err := ServeWorker(context.Background(), os.Stdin, os.Stdout, func(cfg taskproto.WorkerConfig) (Runner, *slog.Logger, error) {
			log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
			log.Info("test worker configured", "slot", cfg.Slot, "root", cfg.Root, "coroutine", cfg.Coroutine)
			return RunnerFunc(testRunner), log, nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testRunner runs the tasks of the tests, written in Go:
//
//	echo   returns its arguments
//	meta   returns the task's metadata
//	pid    returns the worker's pid
//	panic  panics with its first argument
//	fail   fails with class "args"
//	exit   ends the worker process with status 3
//	wait   returns "cancelled: <err>" once its context is done
//	sleep  returns after its first argument in milliseconds
//	delivery  on the first delivery, when its first argument is not 0,
//	       waits until its context is done (the test kills its worker
//	       meanwhile); returns the delivery (Call.Delivery)
func testRunner(ctx context.Context, c Call) Result {
	value := func(v any) Result {
		b, err := json.Marshal(v)
		return Result{Value: b, Err: err}
	}
	var args []any
	_ = json.Unmarshal(c.Args, &args)
	switch c.Task {
	case "echo":
		return value(args)
	case "meta":
		return value(c.Meta)
	case "pid":
		return value(os.Getpid())
	case "panic":
		panic(args[0])
	case "fail":
		return Result{Fail: taskproto.FailArgs, Err: errors.New("bad arguments")}
	case "exit":
		os.Exit(3)
	case "wait":
		<-ctx.Done()
		return value("cancelled: " + ctx.Err().Error())
	case "sleep":
		ms, _ := args[0].(float64)
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return value("slept")
	case "delivery":
		if block, _ := args[0].(float64); block != 0 && c.Delivery == 1 {
			<-ctx.Done()
		}
		return value(c.Delivery)
	}
	return Result{Fail: taskproto.FailLoad, Err: fmt.Errorf("there is no task %s", c.Task)}
}

// testCommand starts this test binary as a worker.
func testCommand() *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	return cmd
}
