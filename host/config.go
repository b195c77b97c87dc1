package host

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"time"
)

// Config holds an application's run options. The command line of Main
// overrides them with its flags.
type Config struct {
	// Root is the application directory holding api/, public/, task/ and
	// template/. Default ".".
	Root string
	// Addr is the address to listen on. Default "127.0.0.1:8080", or
	// ":$PORT" when PORT is set.
	Addr string
	// DataDir holds session files, generated secrets and application data;
	// the serve flag --data sets it. A relative path is taken from the
	// working directory, not from Root. Default: the directory "data" inside
	// Root (made absolute when the application starts), which is ./data
	// with the default Root.
	DataDir string
	// TaskWorkerNum is the number of task worker processes. Default 0: no
	// task workers, and dispatch fails.
	TaskWorkerNum int
	// TaskEnableCoroutine runs each task in its own goroutine inside its
	// worker. Default true.
	TaskEnableCoroutine bool
	// Dev shows compile errors with their source lines in error pages and
	// the compile errors of handler files in the handler_compile_error
	// hint, and lets a changed file that does not compile replace the
	// version that served.
	Dev bool
	// DB is the database URL, sqlite:PATH or postgres://...; the serve
	// flag --db sets it. Default: $ZEALGO_DB (DBEnv), else SQLite in
	// <DataDir>/app.db. See App.DB.
	DB string
	// MaxBodyBytes bounds the request body a handler's input reads (and
	// any other read of the body inside a handler): past it the request
	// gets 413 request_too_large. Default 8 MiB, PHP's post_max_size; the
	// serve flag --max-body sets it.
	MaxBodyBytes int64
	// MaxInputFields bounds how many fields a body may hold (form fields,
	// multipart values, and the members of JSON objects at every depth):
	// past it the input is 400 invalid_body. Default 1000, PHP's
	// max_input_vars.
	MaxInputFields int
	// MaxInputDepth bounds how deep the arrays and objects of a JSON body
	// may nest: past it the input is 400 invalid_body. Default 64, PHP's
	// max_input_nesting_level.
	MaxInputDepth int
	// BodyTimeout bounds how long a request body may make no progress:
	// a read that waits longer fails (408 request_timeout for the input
	// step) and the connection is closed. Default 60s, as nginx's
	// client_body_timeout; 0: no limit. The serve flag --body-timeout
	// sets it.
	BodyTimeout time.Duration
	// WriteTimeout bounds how long the response of a handler or page may
	// take to reach the client, counted from the moment it starts (its
	// header is sent) and again from each flush of a stream (and each
	// second of a response written through past its buffer), so that a
	// client that stops reading cannot hold the connection; the time the
	// handler computes before does not count. Under Serve, the server sets
	// the deadline when it has read a request, and a response that starts
	// within a quarter of it (at most a second) keeps that one. Static
	// files of 1 MiB or more are not bounded, smaller ones count from the
	// request. Default 60s; 0: no limit. The serve flag --write-timeout
	// sets it.
	WriteTimeout time.Duration
	// TrustedOrigins are origins (scheme://host[:port]) from which
	// browsers may send unsafe requests (POST, PUT, DELETE, PATCH) across
	// origins; http.CrossOriginProtection refuses every other such request
	// with 403 cross_origin_request. Requests that carry neither
	// Sec-Fetch-Site nor Origin (API clients, curl) are not affected. The
	// single entry "*" turns the protection off. The serve flag
	// --trusted-origins sets it.
	TrustedOrigins []string
	// AllowOrigins are the origins (scheme://host[:port]) of front ends
	// served elsewhere that call the application from a browser: CORS
	// answers them (preflight, credentials) and the cross-origin
	// protection trusts them, as App.AllowOrigins, to which it adds. The
	// serve flag --allow-origin sets it (cors.go, docs/setup.md).
	AllowOrigins []string
	// TrustedProxies are the addresses (CIDRs or single IPs) of reverse
	// proxies whose X-Forwarded-For and X-Forwarded-Proto headers are
	// believed: only for a request from one of them is the client address
	// (ClientIP, rate limits, throttles) taken from X-Forwarded-For and
	// the session cookie marked Secure on X-Forwarded-Proto: https.
	// Default none. The serve flag --trusted-proxies sets it.
	TrustedProxies []string
	// FrameAncestors is the source list of the frame-ancestors directive
	// sent as Content-Security-Policy, with X-Frame-Options DENY for
	// 'none' and SAMEORIGIN for 'self', so that pages cannot be framed by
	// other sites: on every response outside /api/, and on every /api/
	// response that is not JSON (JSON answers have nothing a frame could
	// show). A handler that sets either header itself keeps its own.
	// Default "'none'"; "" sends neither. The serve flag --frame-ancestors
	// sets it.
	FrameAncestors string
	// ThrottleLimit and ThrottleWindow are the limit of App.Throttle:
	// ThrottleLimit attempts per key, under way or failed, within any
	// ThrottleWindow, then 429. Default 5 a minute.
	ThrottleLimit  int
	ThrottleWindow time.Duration
	// ThrottleStore counts the attempts of App.Throttle. Default: NATS's
	// key-value store when NATS is on (embedded or shared; a window of at
	// most an hour), where the counts outlive the process and hold across
	// the instances that share it; else the memory of this process.
	ThrottleStore ThrottleStore
	// ReloadDebounce is how long the watched files must all stay quiet
	// after a change before the changed files are recompiled, together,
	// as one batch swapped in at once (a checkout's files within it make
	// one batch). Default 20ms: most of the time from a save to the first
	// answer of the new version is this wait, and 20ms keeps that within
	// the 50ms target on a loaded machine, while a checkout or a deploy
	// writes its files far closer together than 20ms (git writes them
	// well under a millisecond apart; a batch during which one more file
	// changes is built again, so a slower writer still ends in one
	// consistent state). A handler or page file that fails to compile
	// while a working version serves, or at its first build less than
	// 250ms after it was written (a process started mid-save), counts
	// only at a second look 250ms after the write with the file
	// unchanged (a save written in parts gets its next part first); then,
	// with Dev, its error is shown, and without Dev the working version
	// keeps serving and the error is logged.
	ReloadDebounce time.Duration
	// ShutdownTimeout bounds a graceful shutdown. Default 10s.
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout bounds how long a client may take to send a
	// request's header, so that slow clients cannot hold connections open
	// (Slowloris). Default 10s; negative: no limit. See BodyTimeout and
	// WriteTimeout for the body and the response.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request. Default 2m; negative: no limit. Under Serve, these
	// two and WriteTimeout, when a second or more, are enforced by one
	// clock shared by the connections (internal/deadline), at most 100ms
	// after they pass.
	IdleTimeout time.Duration
	// MaxExecutionTime bounds the time until a request's response starts:
	// past it the client gets 503 service_unavailable and the request's
	// context is done; a handler still running a moment later makes a
	// supervised process replace itself (exectime.go). Default 30s, as
	// PHP's max_execution_time; zero or negative: no limit.
	MaxExecutionTime time.Duration
	// MemoryLimit bounds the memory of the process serving under the
	// supervisor of `zealgo serve`: past it that process ends and a new
	// one takes over (supervise.go). Default 4 GiB; 0: no bound. A process
	// not under the supervisor ignores it.
	MemoryLimit int64
	// GCFloor is the least heap goal of the garbage collector while the
	// application serves (Serve): a process whose live heap is small
	// collects when its heap reaches GCFloor rather than after every few
	// megabytes, which costs several percent of CPU at a high request
	// rate (internal/gcfloor). A live heap of half of it or more is
	// collected as GOGC says. Default 32 MiB; 0: Go's own policy. The
	// built process of tiered serve raises it in proportion to the heap
	// its warmed interpreter keeps (docs/tiered.md).
	GCFloor int64
	// MaxLoadedFiles bounds how many compiled files (each an interpreter)
	// stay in memory, for each of api/ and public/ (and task/ in each task
	// worker): loading one more unloads the least recently used, which is
	// compiled again on its next request. Default 0: no bound.
	MaxLoadedFiles int
	// UnloadIdle unloads a compiled handler file not requested within it;
	// it is compiled again on its next request. Default 0: never.
	UnloadIdle time.Duration
	// Logger receives the server's log, the debug log of the spec. Default:
	// text to standard error.
	Logger *slog.Logger
	// Session configures sessions: secret, cookie, lifetime and store.
	Session SessionConfig
	// NATS configures NATS JetStream, which carries the tasks durably
	// and, shared by several instances, their sessions and rate limits.
	NATS NATSConfig
	// BasicAuth maps user names to passwords for the basic-auth middleware
	// alias, besides the pairs in the ZEALGO_BASIC_AUTH environment variable.
	BasicAuth map[string]string
	// WorkerCommand returns the command that starts a task worker: a
	// process of the same application whose main reaches App.Run with the
	// argument "worker" (Main does). The pool sets its Stdin, Stdout and
	// Stderr, which carry the protocol and the worker's log. Default: this
	// executable with the argument "worker".
	WorkerCommand func() *exec.Cmd
	// Ops configures health checks, metrics, tracing and the access log
	// (ops.go).
	Ops OpsConfig
	// Realtime tunes WebSockets and Server-Sent Events streams
	// (live_config.go).
	Realtime RealtimeConfig
}

// Option sets a field of Config.
type Option func(*Config)

// WithRoot sets Config.Root.
func WithRoot(dir string) Option { return func(c *Config) { c.Root = dir } }

// WithAddr sets Config.Addr.
func WithAddr(addr string) Option { return func(c *Config) { c.Addr = addr } }

// WithDataDir sets Config.DataDir.
func WithDataDir(dir string) Option { return func(c *Config) { c.DataDir = dir } }

// WithTaskWorkers sets Config.TaskWorkerNum.
func WithTaskWorkers(n int) Option { return func(c *Config) { c.TaskWorkerNum = n } }

// WithTaskCoroutine sets Config.TaskEnableCoroutine.
func WithTaskCoroutine(on bool) Option { return func(c *Config) { c.TaskEnableCoroutine = on } }

// WithDev sets Config.Dev.
func WithDev(on bool) Option { return func(c *Config) { c.Dev = on } }

// WithMaxExecutionTime sets Config.MaxExecutionTime.
func WithMaxExecutionTime(d time.Duration) Option { return func(c *Config) { c.MaxExecutionTime = d } }

// WithMaxLoadedFiles sets Config.MaxLoadedFiles.
func WithMaxLoadedFiles(n int) Option { return func(c *Config) { c.MaxLoadedFiles = n } }

// WithUnloadIdle sets Config.UnloadIdle.
func WithUnloadIdle(d time.Duration) Option { return func(c *Config) { c.UnloadIdle = d } }

// WithLogger sets Config.Logger.
func WithLogger(l *slog.Logger) Option { return func(c *Config) { c.Logger = l } }

// WithLogOutput logs text to w at the given level.
func WithLogOutput(w io.Writer, level slog.Level) Option {
	return WithLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})))
}

// WithConfig applies f to the Config, for fields without an Option.
func WithConfig(f func(*Config)) Option { return Option(f) }

func defaultConfig() Config {
	addr := "127.0.0.1:8080"
	if p := os.Getenv("PORT"); p != "" {
		addr = ":" + p
	}
	return Config{
		Root:                ".",
		Addr:                addr,
		TaskEnableCoroutine: true,
		MaxBodyBytes:        8 << 20,
		MaxInputFields:      1000,
		MaxInputDepth:       64,
		BodyTimeout:         60 * time.Second,
		WriteTimeout:        60 * time.Second,
		FrameAncestors:      "'none'",
		ThrottleLimit:       5,
		ThrottleWindow:      time.Minute,
		ReloadDebounce:      20 * time.Millisecond,
		ShutdownTimeout:     10 * time.Second,
		ReadHeaderTimeout:   10 * time.Second,
		IdleTimeout:         2 * time.Minute,
		Ops:                 defaultOpsConfig(),
		MaxExecutionTime:    30 * time.Second,
		MemoryLimit:         4 << 30,
		GCFloor:             32 << 20,
	}
}
