// Command zbench is the zealgo server of the benchmarks: the zealgo
// command plus compiled helpers provided to handlers: benchlib.Records,
// and benchlib.Tasks, which the finish callback of tasks feeds.
// ZBENCH_MAX_LOADED and ZBENCH_UNLOAD_IDLE (a Go duration) set the memory
// bound of loaded handler files.
//
//	zbench serve --root DIR --addr 127.0.0.1:PORT
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/zealgo/zealgo/bench/benchlib"
	"github.com/zealgo/zealgo/bench/libsym"
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/symbols"
)

func main() {
	var opts []host.Option
	if s := os.Getenv("ZBENCH_MAX_LOADED"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "zbench: ZBENCH_MAX_LOADED:", err)
			os.Exit(2)
		}
		opts = append(opts, host.WithMaxLoadedFiles(n))
	}
	if s := os.Getenv("ZBENCH_UNLOAD_IDLE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "zbench: ZBENCH_UNLOAD_IDLE:", err)
			os.Exit(2)
		}
		opts = append(opts, host.WithUnloadIdle(d))
	}
	app := host.New(opts...)
	app.Symbols(symbols.Symbols)
	app.Symbols(libsym.Symbols)
	app.Provide(&benchlib.Records{})
	tasks := benchlib.NewTasks()
	app.Provide(tasks)
	app.OnTaskFinish(tasks.Finish)
	host.Main(app)
}
