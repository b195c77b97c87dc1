// Command treescale measures how zealgo scales with the size of the handler
// tree. For each size it writes that many handler files into a temporary
// root, starts the zbench server on it and reports: the time from exec to
// the first answer, the first request to a cold file (compiled on demand)
// and to the same file warm, the mean time of serving every file once
// (each cold), and the resident memory and Go heap after every file has
// served once, with the growth per loaded file. It prints a Markdown table.
//
//	treescale -bin ./zbench -sizes 10,100,1000 -cap 100
//
// With -built it measures the same trees compiled: each tree is built
// with zbench's main by `zealgo build` (internal/buildgen, run from the
// repository's root) and served by that binary instead of -bin.
//
//	treescale -built -sizes 1000 -cap 0
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zealgo/zealgo/bench/internal/benchutil"
	"github.com/zealgo/zealgo/internal/buildgen"
)

// built: serve each tree with the binary zealgo build makes of it.
var built = flag.Bool("built", false, "serve each tree compiled by zealgo build (zbench's main), from the repository root")

const handlerFile = `//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

var h%[1]d = func(api *host.API) any {
	return map[string]any{"id": %[1]d, "name": "handler %[1]d", "method": api.Method()}
}
`

type row struct {
	files, cap                int
	start, cold, warm, mean   time.Duration
	rssBase, rssAll           int64
	heapBase, heapAll, loaded int64
}

func main() {
	bin := flag.String("bin", "./zbench", "the zbench server binary")
	sizes := flag.String("sizes", "10,100,1000", "handler tree sizes")
	capN := flag.Int("cap", 100, "MaxLoadedFiles of the extra capped run at the largest size (0: none)")
	flag.Parse()
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			log.Fatalf("treescale: -sizes: %v", err)
		}
		ns = append(ns, n)
	}
	var rows []row
	for _, n := range ns {
		r, err := measure(*bin, n, 0)
		if err != nil {
			log.Fatal(err)
		}
		rows = append(rows, r)
	}
	if *capN > 0 {
		r, err := measure(*bin, ns[len(ns)-1], *capN)
		if err != nil {
			log.Fatal(err)
		}
		rows = append(rows, r)
	}
	fmt.Println("| files | cap | start (exec to first answer) | cold first request | same file warm | mean request, every file once (cold) | RSS at start | RSS after all served | Go heap after all served | heap growth per loaded file | RSS growth per loaded file |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		c := "none"
		if r.cap > 0 {
			c = strconv.Itoa(r.cap)
		}
		fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %.1f KiB | %.1f KiB |\n", r.files, c,
			benchutil.Ms(r.start), benchutil.Ms(r.cold), benchutil.Ms(r.warm), benchutil.Ms(r.mean),
			benchutil.MiB(r.rssBase), benchutil.MiB(r.rssAll), benchutil.MiB(r.heapAll),
			float64(r.heapAll-r.heapBase)/float64(r.loaded)/1024, float64(r.rssAll-r.rssBase)/float64(r.loaded)/1024)
	}
}

func measure(bin string, n, capN int) (row, error) {
	r := row{files: n, cap: capN}
	root, err := os.MkdirTemp("", "zealgo-treescale-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(root)
	if err := write(filepath.Join(root, "api", "bench", "mem.go"), benchutil.MemProbe); err != nil {
		return r, err
	}
	for k := 0; k < n; k++ {
		p := filepath.Join(root, "api", fmt.Sprintf("m%d", k/100), fmt.Sprintf("h%d.go", k))
		if err := write(p, fmt.Sprintf(handlerFile, k)); err != nil {
			return r, err
		}
	}
	if *built {
		out := filepath.Join(root, "zbench-built")
		if _, err := buildgen.Build(context.Background(), buildgen.Options{Root: root, Module: ".",
			Main: "github.com/zealgo/zealgo/bench/cmd/zbench", Dir: filepath.Join(root, ".zealgo", "build"), Out: out}); err != nil {
			return r, err
		}
		bin = out
	}
	var env []string
	if capN > 0 {
		// The memory probe is one more loaded file.
		env = append(env, "ZBENCH_MAX_LOADED="+strconv.Itoa(capN+1))
	}
	// Unsupervised: the RSS measured is the serving process's own.
	srv, err := benchutil.Start(bin, []string{"serve", "--root", root, "--addr", "{addr}", "--supervise=false"}, env, "/api/none", 20*time.Second)
	if err != nil {
		return r, err
	}
	defer srv.Stop()
	r.start = srv.Ready
	if r.heapBase, err = srv.Heap(); err != nil {
		return r, err
	}
	if r.rssBase, err = srv.RSS(); err != nil {
		return r, err
	}
	if r.cold, err = timedGet(srv.URL("/api/m0/h0")); err != nil {
		return r, err
	}
	if r.warm, err = timedGet(srv.URL("/api/m0/h0")); err != nil {
		return r, err
	}
	t0 := time.Now()
	for k := 1; k < n; k++ {
		if _, err := timedGet(srv.URL(fmt.Sprintf("/api/m%d/h%d", k/100, k))); err != nil {
			return r, err
		}
	}
	if n > 1 {
		r.mean = time.Since(t0) / time.Duration(n-1)
	}
	if r.heapAll, err = srv.Heap(); err != nil {
		return r, err
	}
	if r.rssAll, err = srv.RSS(); err != nil {
		return r, err
	}
	r.loaded = int64(n)
	if capN > 0 {
		r.loaded = int64(min(n, capN))
	}
	return r, nil
}

func write(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

func timedGet(url string) (time.Duration, error) {
	t0 := time.Now()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("treescale: GET %s: %s", url, resp.Status)
	}
	return time.Since(t0), nil
}
