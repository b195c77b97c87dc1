package main

import "strings"

// head starts every handler file of the application under test.
const head = "//go:build ignore\n\npackage main\n\n"

// appFiles is the application under test: the vectors, a probe, and a row
// writer and a task dispatcher whose acknowledged work is counted at the
// end.
var appFiles = map[string]string{
	"api/ping.go": head + "import (\n\t\"os\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		"var ping = func(api *host.API) any { return map[string]any{\"pid\": os.Getpid()} }\n",

	// A row: appended and synced to data/rows.txt before the answer.
	"api/row.go": head + "import (\n\t\"fmt\"\n\t\"os\"\n\t\"path/filepath\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		`var post = func(api *host.API) (any, error) {
	n, _ := api.Int("n")
	f, err := os.OpenFile(filepath.Join(api.App().Config().DataDir, "rows.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%d\n", n); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	return map[string]any{"n": n}, nil
}
`,
	// A task: dispatched, then appended to data/tasks.txt by a worker.
	"api/task.go": head + "import (\n\t\"path/filepath\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		`var post = func(api *host.API) (any, error) {
	n, _ := api.Int("n")
	path := filepath.Join(api.App().Config().DataDir, "tasks.txt")
	id, err := api.App().Server().Task(host.Task{Handler: "/task/mark", Args: []any{path, n}})
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": id}, nil
}
`,
	"task/mark.go": head + "import (\n\t\"fmt\"\n\t\"os\"\n)\n\n" +
		`var mark = func(path string, n int) any {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	fmt.Fprintf(f, "%d\n", n)
	f.Sync()
	return n
}
`,

	"api/nilmap.go": head + "import \"github.com/zealgo/zealgo/host\"\n\n" +
		"var nilmap = func(api *host.API) any { var m map[string]int; m[\"x\"] = 1; return m }\n",
	"api/gopanic.go": head + "import \"github.com/zealgo/zealgo/host\"\n\n" +
		"var gopanic = func(api *host.API) any {\n\tgo func() { panic(\"in a goroutine\") }()\n\treturn \"started\"\n}\n",
	"api/after.go": head + "import (\n\t\"time\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		"var after = func(api *host.API) any {\n\ttime.AfterFunc(time.Millisecond, func() { panic(\"in time.AfterFunc\") })\n\treturn \"scheduled\"\n}\n",
	"api/ctxafter.go": head + "import (\n\t\"context\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		"var ctxafter = func(api *host.API) any {\n\tctx, cancel := context.WithCancel(context.Background())\n" +
		"\tcontext.AfterFunc(ctx, func() { panic(\"in context.AfterFunc\") })\n\tcancel()\n\treturn \"cancelled\"\n}\n",
	"api/wggo.go": head + "import (\n\t\"sync\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		"var wggo = func(api *host.API) any {\n\tvar wg sync.WaitGroup\n\twg.Go(func() { panic(\"in sync.WaitGroup.Go\") })\n\twg.Wait()\n\treturn \"waited\"\n}\n",
	"api/exit.go": head + "import (\n\t\"os\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
		"var exit = func(api *host.API) any { os.Exit(3); return nil }\n",
	"api/deep.go": head + "import \"github.com/zealgo/zealgo/host\"\n\n" +
		"func rec(n int) int {\n\tif n == 0 {\n\t\treturn 0\n\t}\n\treturn 1 + rec(n-1)\n}\n\n" +
		"var deep = func(api *host.API) any { return rec(1000000) }\n",
	"api/alloc.go": head + "import \"github.com/zealgo/zealgo/host\"\n\n" +
		"var alloc = func(api *host.API) any { b := make([]byte, 10<<30); return len(b) }\n",
	"api/grow.go": head + "import \"github.com/zealgo/zealgo/host\"\n\n" +
		`var grow = func(api *host.API) any {
	var keep [][]byte
	for {
		b := make([]byte, 64<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		keep = append(keep, b)
	}
	return len(keep)
}
`,
	"api/mapwrites.go": head + "import \"github.com/zealgo/zealgo/host\"\n\n" +
		`var mapwrites = func(api *host.API) any {
	m := map[int]int{}
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for i := 0; i < 1000000; i++ {
				m[i%1000] = g
			}
			done <- true
		}(g)
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	return len(m)
}
`,
	"api/loop.go": head + "import \"github.com/zealgo/zealgo/host\"\n\n" +
		"var loop = func(api *host.API) any {\n\tn := 0\n\tfor {\n\t\tn++\n\t}\n\treturn n\n}\n",
}

// vector is one way to try to take the server down.
type vector struct {
	name string
	path string // GET path, or "" for kill
	kill bool   // SIGKILL the serving process instead of a request
}

var vectors = []vector{
	{name: "panic in the handler (nil map write)", path: "/api/nilmap"},
	{name: "panic in a goroutine (`go func`)", path: "/api/gopanic"},
	{name: "panic in a `time.AfterFunc` func", path: "/api/after"},
	{name: "panic in a `context.AfterFunc` func", path: "/api/ctxafter"},
	{name: "panic in a `sync.WaitGroup.Go` func", path: "/api/wggo"},
	{name: "`os.Exit(3)`", path: "/api/exit"},
	{name: "recursion 1,000,000 calls deep", path: "/api/deep"},
	{name: "`make([]byte, 10<<30)` (10 GiB)", path: "/api/alloc"},
	{name: "memory growth, 64 MiB touched at a time", path: "/api/grow"},
	{name: "concurrent map writes (4 goroutines)", path: "/api/mapwrites"},
	{name: "infinite loop", path: "/api/loop"},
	{name: "`kill -9` of the serving process", kill: true},
}

// malformed are raw requests with bad paths and bad HTTP; none may crash
// the server or bring back a source file.
var malformed = []string{
	"GET /api/../api/ping.go HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /api/ping.go HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /api/%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /api/%2e%2e%2fapi%2fping.go HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /../../../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /api/ping%00.go HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /api/%c0%ae%c0%ae/ping.go HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /.git/config HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET //api//ping HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /api/ping HTTP/9.9\r\nHost: x\r\n\r\n",
	"BREW /api/ping HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /api/ping HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n",
	"GET /" + strings.Repeat("a", 100<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n",
	"POST /api/row HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nbad\r\n0\r\n\r\n",
	"POST /api/row HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
	"POST /api/row HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nn=123",
	"POST /api/row HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{\"n\":",
	"POST /api/row HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n" +
		strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
	"POST /api/row HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=zz\r\nContent-Length: 20\r\n\r\n--zz\r\nbroken\r\n--z",
	"\x00\x01\x02\x03\xff\xfe garbage\r\n\r\n",
	"GET /api/ping HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
}
