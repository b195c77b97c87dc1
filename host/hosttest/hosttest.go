package hosttest

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/symbols"
)

// ServeApp returns the application that `zealgo serve` runs: host.New()
// with the host package's symbol table, nothing else configured. It is the
// App function used when no WithApp option is given.
func ServeApp() *host.App {
	app := host.New()
	app.Symbols(symbols.Symbols)
	return app
}

// Option changes how archives are run.
type Option func(*settings)

type settings struct {
	newApp          func() *host.App
	root            string
	hostOpts        []host.Option
	trailingNewline bool
	parallel        bool
}

// WithApp gives the function that builds the application under test, new
// and not started, for each archive: the configuration of the
// application's main (its symbols, Provide, middleware, hooks) without
// host.Main. Default: ServeApp.
func WithApp(newApp func() *host.App) Option {
	return func(s *settings) { s.newApp = newApp }
}

// WithRoot runs the archives against an existing application root, the
// application's own api/, public/, task/ and template/ directories, which
// hosttest never writes to. Archives run with it may hold no files.
// Default: a fresh temporary root per archive holding the archive's files.
func WithRoot(dir string) Option {
	return func(s *settings) { s.root = dir }
}

// WithOptions applies host options to each application after the App
// function, before hosttest's own: the root, the data directory and the log
// output are hosttest's.
func WithOptions(opts ...host.Option) Option {
	return func(s *settings) { s.hostOpts = append(s.hostOpts, opts...) }
}

// WithTrailingNewline also accepts a body with one newline more than the
// expected one, as a static file written from an archive has: every
// section of a txtar file ends with a newline.
func WithTrailingNewline() Option {
	return func(s *settings) { s.trailingNewline = true }
}

// Parallel makes RunDir run its archives in parallel subtests
// (testing.T.Parallel). Each archive has its own application either way.
func Parallel() Option {
	return func(s *settings) { s.parallel = true }
}

// Result is what Check found running one archive.
type Result struct {
	// Exchanges holds the responses received, in the archive's order; it
	// stops short of the archive when a request could not be sent.
	Exchanges []Exchange
	// Failures describes each way the responses or the log differ from the
	// archive, one sentence each; none when the archive passed.
	Failures []string
	// Log is everything the application logged, at debug level and above.
	Log string
}

// Exchange is one request of an archive and the response it received.
type Exchange struct {
	// Name is the request's section: "request", "request 2", ...
	Name string
	// Request is the request's first line, e.g. "GET /api/hello".
	Request string
	// Status, Header and Body are the response received.
	Status int
	Header http.Header
	Body   string
}

// RunDir runs every archive dir/*.txtar, in name order, as a subtest of t
// named after the file, and fails t when dir holds none.
func RunDir(t *testing.T, dir string, opts ...Option) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("zealgo: hosttest: no archives *.txtar in %s (%v)", dir, err)
	}
	s := newSettings(opts)
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			if s.parallel {
				t.Parallel()
			}
			Run(t, p, opts...)
		})
	}
}

// Run runs the archive at path, reporting each failure with t.Error,
// prefixed with the path, and then the application's log; an archive that
// cannot run (see Check) stops t with t.Fatal.
func Run(t *testing.T, path string, opts ...Option) {
	t.Helper()
	res, err := Check(path, opts...)
	if err != nil {
		if res != nil && res.Log != "" {
			t.Logf("application log:\n%s", res.Log)
		}
		t.Fatal(err)
	}
	for _, f := range res.Failures {
		t.Errorf("%s: %s", path, f)
	}
	if len(res.Failures) > 0 {
		t.Logf("application log:\n%s", res.Log)
	}
}

// Check runs the archive at path on a fresh application served on a
// loopback httptest server, and returns what it found: Result.Failures
// lists the mismatches. The error is for an archive that cannot run: one
// that cannot be read or breaks the format, or an application that does
// not start (the Result then holds the log so far).
func Check(path string, opts ...Option) (*Result, error) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		return nil, fmt.Errorf("zealgo: hosttest: %w", err)
	}
	a, err := parseArchive(ar)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	s := newSettings(opts)
	if s.root != "" && len(a.files) > 0 {
		return nil, fmt.Errorf("zealgo: hosttest: %s holds files, but WithRoot fixes the root at %s", path, s.root)
	}
	return run(a, s)
}

func newSettings(opts []Option) *settings {
	s := &settings{newApp: ServeApp}
	for _, o := range opts {
		o(s)
	}
	return s
}

// run starts the application for a, sends the exchanges, checks the log
// and stops the application.
func run(a *archive, s *settings) (*Result, error) {
	tmp, err := os.MkdirTemp("", "hosttest-")
	if err != nil {
		return nil, fmt.Errorf("zealgo: hosttest: %w", err)
	}
	defer os.RemoveAll(tmp)
	root := s.root
	if root == "" {
		root = filepath.Join(tmp, "root")
		if err := writeTree(root, a.files); err != nil {
			return nil, err
		}
	}
	logs := &buffer{}
	srv, err := start(a, s, root, filepath.Join(tmp, "data"), logs)
	if err != nil {
		return &Result{Log: logs.String()}, err
	}
	res := &Result{}
	srv.runExchanges(a, s, res)
	res.checkLog(a, logs.String())
	srv.close()
	res.Log = logs.String()
	return res, nil
}

// writeTree writes files, slash-separated names to contents, under root.
func writeTree(root string, files map[string][]byte) error {
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("zealgo: hosttest: %w", err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("zealgo: hosttest: %w", err)
		}
	}
	return os.MkdirAll(root, 0o755)
}

// checkLog checks the log and nolog sections against the log so far.
func (r *Result) checkLog(a *archive, log string) {
	for _, want := range a.log {
		if !strings.Contains(log, want) {
			r.failf("log lacks %q", want)
		}
	}
	for _, bad := range a.nolog {
		if strings.Contains(log, bad) {
			r.failf("log has %q", bad)
		}
	}
}

func (r *Result) failf(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// buffer collects the application's log from its goroutines.
type buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
