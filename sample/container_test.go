package main

import (
	"debug/elf"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// dockerfile is what TestContainerRecipe reads from the repository's
// Dockerfile: the build command and the final stage's variables.
type dockerfile struct {
	build string            // the go build command of the build stage
	env   map[string]string // ENV of the final stage
	user  string            // USER of the final stage
}

// readDockerfile parses the parts of ../Dockerfile the test replays.
func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ") // join continued lines
	d := dockerfile{env: map[string]string{}}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "FROM":
			d.env = map[string]string{} // a new stage
		case f[0] == "ENV":
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				d.env[k] = v
			}
		case f[0] == "USER":
			d.user = f[1]
		}
	}
	d.build = regexp.MustCompile(`CGO_ENABLED=0 go build [^&\n]*`).FindString(text)
	return d
}

// TestContainerRecipe replays the Dockerfile without Docker (none runs
// here): the build stage's static build of the sample's command, its
// check of the handler files and its `build --embed` of them, then the
// final stage's command with its variables, as its non-root user when the
// test runs as root, with the built binary alone (an empty root) and a
// fresh data directory. The server answers its health checks, a page, and
// a registration that writes to the data directory.
func TestContainerRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the sample binary")
	}
	t.Parallel()
	d := readDockerfile(t)
	want := `CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags="-s -w" -o /out/zealgo ./sample`
	if strings.TrimSpace(d.build) != want {
		t.Fatalf("Dockerfile builds with %q, want %q", d.build, want)
	}
	dir := t.TempDir()
	for _, p := range []string{filepath.Dir(dir), dir} { // for the non-root user
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	zealgo := sampleBinary(t) // the build stage's go build (build_test.go)
	if out, err := exec.Command(zealgo, "check", "--root", "..").CombinedOutput(); err != nil {
		t.Fatalf("the build stage's check: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "app")
	genMu.Lock() // genDir(): <root>/.zealgo/build in the image's build stage
	out, err := exec.Command(zealgo, "build", "--root", "..", "--dir", genDir(), "--embed", "-o", bin).CombinedOutput()
	genMu.Unlock()
	if err != nil {
		t.Fatalf("the build stage's zealgo build: %v\n%s", err, out)
	}
	assertStatic(t, bin)

	root := filepath.Join(dir, "root") // /app in the image: empty
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := testutil.FreeAddr(t)
	env := os.Environ()
	for k, v := range d.env {
		switch k {
		case "ZEALGO_ROOT":
			v = root // /app in the image
		case "ZEALGO_DATA":
			v = data // /data
		case "ZEALGO_ADDR":
			if v != ":8080" {
				t.Errorf("ZEALGO_ADDR=%s, want :8080 (every interface of the container)", v)
			}
			v = addr
		}
		env = append(env, k+"="+v)
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env, cmd.Dir = env, root
	logs := &testutil.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if os.Getuid() == 0 && (d.user == "nonroot" || d.user == "65532:65532") { // distroless's nonroot is 65532
		if err := os.Chown(data, 65532, 65532); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + addr
	testutil.WaitFor(t, 20*time.Second, "the container's server to be ready", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	srv := sampleServer{URL: base, Log: logs}
	c := srv.client(t)
	if uid := c.register("docker", "password-docker"); uid == 0 {
		t.Fatal("registration failed")
	}
	if r := c.do("GET", "/learn/", nil); r.Status != 200 && r.Status != http.StatusSeeOther {
		t.Errorf("GET /learn/: %d", r.Status)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, logs)
	}
	if !strings.Contains(logs.String(), `"msg":"request"`) {
		t.Errorf("the image's settings (JSON log, access log) did not apply:\n%s", logs)
	}
	fi, err := os.Stat(filepath.Join(data, "zealgo.db"))
	if err != nil {
		t.Fatalf("no database in the data directory: %v", err)
	}
	if cmd.SysProcAttr != nil && fi.Sys().(*syscall.Stat_t).Uid != 65532 {
		t.Errorf("the database belongs to uid %d, not the image's user", fi.Sys().(*syscall.Stat_t).Uid)
	}
}

// assertStatic fails the test unless bin is a static executable: no
// program interpreter, no shared library.
func assertStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter: not static", bin)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v: not static", bin, libs)
	}
}
