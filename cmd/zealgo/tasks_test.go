package main

// zealgo tasks list, inspect, retry and purge, run as a user runs them:
// the built binary beside a running zealgo serve on its embedded NATS.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// deadApp: GET /api/go?flag=PATH dispatches task/flag.go, which fails
// while the file PATH does not exist.
var deadApp = map[string]string{
	"api/ping.go": clusterApp["api/ping.go"],
	"api/go.go": head + `var get = func(api *host.API) any {
	id, err := api.Task(host.Task{Handler: "/task/flag", Args: []any{api.String("flag")}})
	if err != nil {
		api.Response(map[string]any{"error": err.Error()}, 503)
		return nil
	}
	return map[string]any{"id": id}
}
`,
	"task/flag.go": "//go:build ignore\n\npackage main\n\nimport (\n\t\"errors\"\n\t\"os\"\n)\n\n" +
		`var flag = func(path string) (any, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, errors.New("no flag yet")
	}
	return "flag found", nil
}
`,
}

// TestTasksCommand: two tasks fail and land in the dead letters; zealgo
// tasks list shows both, inspect one's arguments and failure; once the
// task can succeed, retry dispatches it again and it runs; purge removes
// the other; list is then empty.
func TestTasksCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	root, data, addr := testutil.WriteTree(t, deadApp), t.TempDir(), testutil.FreeAddr(t)
	p := start(t, addr, nil, "serve", "--root", root, "--addr", addr, "--data", data, "--task-workers", "1")
	p.waitHTTP(t)
	flag := filepath.Join(t.TempDir(), "flag")
	dispatch := func() int64 {
		resp, err := http.Get("http://" + addr + "/api/go?flag=" + url.QueryEscape(flag))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var d struct{ ID int64 }
		if resp.StatusCode != 200 || json.Unmarshal(body, &d) != nil || d.ID == 0 {
			t.Fatalf("GET /api/go: %d %s", resp.StatusCode, body)
		}
		return d.ID
	}
	first, second := dispatch(), dispatch()
	tasks := func(args ...string) string {
		t.Helper()
		out, errOut, code := run(t, append([]string{"tasks", "--data", data}, args...)...)
		if code != 0 {
			t.Fatalf("zealgo tasks %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	var list []struct {
		ID      int64
		Handler string
		Kind    string
		Error   string
	}
	testutil.WaitFor(t, 30*time.Second, "both tasks in the dead letters", func() bool {
		list = nil
		return json.Unmarshal([]byte(tasks("list", "--json")), &list) == nil && len(list) == 2
	})
	table := tasks("list")
	for _, id := range []int64{first, second} {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d +/task/flag +error +1 .*no flag yet$`, id)).MatchString(table) {
			t.Errorf("zealgo tasks list lacks task %d:\n%s", id, table)
		}
	}
	var dead struct {
		ID      int64
		Handler string
		Args    []string
		Kind    string
		Error   string
	}
	if err := json.Unmarshal([]byte(tasks("inspect", fmt.Sprint(first))), &dead); err != nil {
		t.Fatal(err)
	}
	if dead.ID != first || dead.Handler != "/task/flag" || len(dead.Args) != 1 || dead.Args[0] != flag ||
		dead.Kind != "error" || !strings.Contains(dead.Error, "no flag yet") {
		t.Errorf("zealgo tasks inspect %d: %+v", first, dead)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := tasks("retry", fmt.Sprint(first))
	m := regexp.MustCompile(fmt.Sprintf(`^task %d dispatched again as task (\d+)\n$`, first)).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("zealgo tasks retry: %q", out)
	}
	testutil.WaitFor(t, 30*time.Second, "the retried task to finish", func() bool {
		return regexp.MustCompile(`msg="task finished" id=` + m[1] + ` task=/task/flag result="\\"flag found\\""`).MatchString(p.logs.String())
	})
	if out := tasks("purge", fmt.Sprint(second)); out != "1 dead tasks removed\n" {
		t.Errorf("zealgo tasks purge %d: %q", second, out)
	}
	if out := tasks("list", "--json"); strings.TrimSpace(out) != "[]" && strings.TrimSpace(out) != "null" {
		t.Errorf("zealgo tasks list after retry and purge: %s", out)
	}
	if _, errOut, code := run(t, "tasks", "--data", data, "inspect", "12x"); code == 0 || !strings.Contains(errOut, `"12x" is no task id`) {
		t.Errorf("zealgo tasks inspect 12x: exit %d: %s", code, errOut)
	}
}
