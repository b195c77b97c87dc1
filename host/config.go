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
	// Dev shows compile errors with their source lines in error pages.
	Dev bool
	// DB is the database URL, sqlite:PATH or postgres://...; the serve
	// flag --db sets it. Default: $ZEALGO_DB (DBEnv), else SQLite in
	// <DataDir>/app.db. See App.DB.
	DB string
	// MaxBodyBytes bounds the request body the input step reads. Default
	// 32 MiB.
	MaxBodyBytes int64
	// ReloadDebounce is how long a changed file must stay quiet before it
	// is recompiled. Default 10ms.
	ReloadDebounce time.Duration
	// ShutdownTimeout bounds a graceful shutdown. Default 10s.
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout bounds how long a client may take to send a
	// request's header, so that slow clients cannot hold connections open
	// (Slowloris). Default 10s; negative: no limit. There is no default
	// write timeout, which would cut streamed responses: use the timeout
	// middleware alias where one is wanted.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request. Default 2m; negative: no limit.
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
		MaxBodyBytes:        32 << 20,
		ReloadDebounce:      10 * time.Millisecond,
		ShutdownTimeout:     10 * time.Second,
		ReadHeaderTimeout:   10 * time.Second,
		IdleTimeout:         2 * time.Minute,
		MaxExecutionTime:    30 * time.Second,
		MemoryLimit:         4 << 30,
	}
}
