package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/zealgo/zealgo/internal/jstask"
	"github.com/zealgo/zealgo/internal/taskpool"
	"github.com/zealgo/zealgo/internal/taskproto"
	"github.com/zealgo/zealgo/interp"
)

// serveWorker is the worker role: taskpool.ServeWorker with the
// application's side (workerSide). Given the configuration the server sent, it runs
// the application's OnStart hooks (a value given to Provide that opens
// there, such as a store, is then ready inside tasks) and runs each task
// it is sent from its file under task/. The OnStop hooks run as it
// returns.
func serveWorker(ctx context.Context, a *App, in io.Reader, out, stderr io.Writer) error {
	ws := &workerSide{a: a, stderr: stderr, calls: taskpool.NewCalls()}
	defer ws.close()
	return taskpool.ServeWorkerCalls(ctx, in, out, ws.setup, ws.calls)
}

// workerSide is the application inside a worker process: the Runner of
// its tasks.
type workerSide struct {
	a      *App
	stderr io.Writer
	calls  *taskpool.Calls       // to the server, for App.KV, Publish and Broadcast without NATS (shared.go)
	cache  fileSource[*taskFunc] // source.go
	hooks  bool                  // OnStart hooks ran: run the OnStop hooks at close
	ops    bool                  // tracing is set up: flush it at close
	db     bool                  // the database pool is open: close it at close
}

// setup configures the application from the server's configuration and
// starts it in the worker role.
func (ws *workerSide) setup(cfg taskproto.WorkerConfig) (taskpool.Runner, *slog.Logger, error) {
	a := ws.a
	a.cfg.Root, a.cfg.DataDir, a.cfg.TaskEnableCoroutine, a.cfg.Dev = cfg.Root, cfg.DataDir, cfg.Coroutine, cfg.Dev
	a.cfg.DB = cfg.DB
	if cfg.Debounce > 0 {
		a.cfg.ReloadDebounce = cfg.Debounce
	}
	a.cfg.TaskWorkerNum = 0 // a task does not dispatch tasks from a worker
	if a.cfg.Logger == nil {
		a.cfg.Logger = slog.New(slog.NewJSONHandler(ws.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a.started, a.worker = true, true
	rt := rtOf(a)
	rt.live.bus.forWorker(cfg.Queue) // App.Broadcast from a task goes through NATS (live_bus.go)
	if cfg.Queue != nil {            // App.KV and Publish: on NATS, else through the server (shared.go)
		rt.shared.forWorker(a.Logger(), cfg.Queue.Replicas, rt.live.bus.conn, nil)
	} else {
		rt.shared.forWorker(a.Logger(), 0, nil, ws.calls)
	}
	if err := a.prepare(); err != nil {
		return nil, nil, err
	}
	log, err := rt.ops.setupWorker(a.Logger()) // tracing.go
	if err != nil {
		return nil, nil, err
	}
	a.log = log
	ws.ops = true
	if rt.db, err = openDB(&a.cfg, a.Logger(), a.dirs.root, false); err != nil { // the server ran the migrations
		return nil, nil, fmt.Errorf("zealgo: worker: %w", err)
	}
	ws.db = true
	ws.hooks = true // also after a failed OnStart, as App.Close does
	if err := a.reg.lifecycle.start(a); err != nil {
		return nil, nil, fmt.Errorf("zealgo: worker: %w", err)
	}
	l := newLoader(a, &rt.ops, &rt.db, nil)
	if err := rt.setup.startWorker(a, l); err != nil { // setup.go's provided values, for tasks
		return nil, nil, fmt.Errorf("zealgo: worker: %w", err)
	}
	cache, err := l.taskSource()
	if err != nil {
		return nil, nil, err
	}
	ws.cache = cache
	return ws, a.log, nil
}

// close stops what setup started.
func (ws *workerSide) close() {
	rt := rtOf(ws.a)
	rt.live.bus.close()
	if ws.cache != nil {
		ws.cache.Close()
	}
	if ws.hooks {
		ws.a.reg.lifecycle.stop()
	}
	if ws.db {
		rt.db.close()
	}
	if ws.ops {
		rt.ops.close(ws.a.Logger())
	}
}

// Run runs one task, in its span when it carries a trace.
func (ws *workerSide) Run(ctx context.Context, c taskpool.Call) taskpool.Result {
	ctx, end := rtOf(ws.a).ops.startTaskSpan(ctx, ws.a.log, c) // task_ops.go
	res := ws.callTask(ctx, c)
	end(res.Fail, res.Err)
	return res
}

// callTask loads the task file and runs its func with the call's
// arguments. It returns the JSON-encoded result, or the failure class and
// the error. Its log records carry the task's id and name, and the id of
// the request that dispatched it.
func (ws *workerSide) callTask(ctx context.Context, c taskpool.Call) (res taskpool.Result) {
	a, cache := ws.a, ws.cache
	fail := func(class string, err error) taskpool.Result { return taskpool.Result{Fail: class, Err: err} }
	if !validName(c.Task) {
		return fail(taskproto.FailLoad, fmt.Errorf("%q is no task name", c.Task))
	}
	info := newTaskInfo(a.log, c)
	if info.Delivery > 1 {
		info.Log.Info("task delivered again", "delivery", info.Delivery)
	}
	tf, err := cache.Get(filepath.Join(a.dirs.task, c.Task+".go"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail(taskproto.FailLoad, fmt.Errorf("there is no file task/%s.go", c.Task))
		}
		return fail(taskproto.FailLoad, err)
	}
	in, err := tf.args(ctx, info, c.Args)
	if err != nil {
		return fail(taskproto.FailArgs, err)
	}
	defer func() {
		if p := recover(); p != nil {
			pi := recovered(p)
			attrs := []any{"id", c.ID}
			if rid := c.Meta[taskpool.MetaRequestID]; rid != "" {
				attrs = append(attrs, "request_id", rid)
			}
			attrs = append(attrs, "file", tf.rel, "panic", pi.desc, "stack", pi.stack())
			a.log.ErrorContext(ctx, "task panic", attrs...)
			res = fail(taskproto.FailPanic, errors.New("panic: "+pi.desc))
		}
	}()
	v, err := tf.call(in)
	if err != nil {
		return fail(taskproto.FailError, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return fail(taskproto.FailResult, fmt.Errorf("%s returned %T, which JSON cannot encode: %w", tf.name, v, err))
	}
	return taskpool.Result{Value: out}
}

// TaskLimits returns the limits task/<task>.go declares (var retry,
// TaskRetry): the JetStream worker applies them (taskpool.Limiter). A
// file that does not load declares none.
func (ws *workerSide) TaskLimits(task string) jstask.Limits {
	if !validName(task) {
		return jstask.Limits{}
	}
	tf, err := ws.cache.Get(filepath.Join(ws.a.dirs.task, task+".go"))
	if err != nil {
		return jstask.Limits{}
	}
	return tf.limits
}

// TaskInfo describes the task being run, to a task func that declares a
// parameter of type *host.TaskInfo (not counted among the positional
// arguments):
//
//	var report = func(info *host.TaskInfo, month string) any {
//		info.Log.Info("building the report", "month", month)
//		return map[string]any{"delivery": info.Delivery}
//	}
type TaskInfo struct {
	// ID is the task's id, as Server.Task returned it.
	ID int64
	// Handler is the task, "/task/<name>".
	Handler string
	// RequestID is the id of the request that dispatched the task
	// (API.Task, Server.TaskContext); "" when none did.
	RequestID string
	// Delivery is 1 on the task's first run. On NATS JetStream, where
	// delivery is at least once, it is more when the task runs again
	// because the worker of an earlier run died or stalled: a task with
	// effects that must not happen twice can look here.
	Delivery int
	// Log is the worker's logger with the task's id and name and the
	// request's id attached (task_id, task, request_id).
	Log *slog.Logger
}

var typeTaskInfo = reflect.TypeOf((*TaskInfo)(nil))

// newTaskInfo describes call c, with a logger that names it.
func newTaskInfo(log *slog.Logger, c taskpool.Call) *TaskInfo {
	info := &TaskInfo{ID: c.ID, Handler: "/task/" + c.Task, RequestID: c.Meta[taskpool.MetaRequestID], Delivery: max(c.Delivery, 1)}
	attrs := []any{"task_id", c.ID, "task", info.Handler}
	if info.RequestID != "" {
		attrs = append(attrs, "request_id", info.RequestID)
	}
	info.Log = log.With(attrs...)
	return info
}

// taskFunc is the func of a task file, with how to fill its parameters.
type taskFunc struct {
	rel, name  string
	fn         reflect.Value
	params     []taskParam
	variadic   bool           // the func is variadic
	varArgs    bool           // its variadic parameter takes positional arguments
	positional []reflect.Type // the types of the positional parameters
	limits     jstask.Limits  // the file's var retry (task_retry.go)
}

// taskParam is one parameter: injected (context.Context, *host.App,
// *host.TaskInfo, *sql.DB, a provided type) or the next positional
// argument.
type taskParam struct {
	kind   argKind // argGoContext, argApp, argTaskInfo, argProvided, or argZero: positional
	inject reflect.Value
}

// buildTask compiles a task file for the cache.
func (l *loader) buildTask(path string) (*taskFunc, error) {
	prog, rel, err := l.compile(l.dirs.task, path)
	if err != nil {
		return nil, err
	}
	return l.analyzeTask(prog, rel)
}

// analyzeTask checks that a task file holds a func named after the file,
// with results (), (T), error or (T, error).
func (l *loader) analyzeTask(prog *interp.Program, rel string) (*taskFunc, error) {
	return l.analyzeTaskFile(interpVars{prog}, rel)
}

// analyzeTaskFile is analyzeTask for a file from either source (source.go).
func (l *loader) analyzeTaskFile(prog fileVars, rel string) (*taskFunc, error) {
	base := strings.TrimSuffix(filepath.Base(rel), ".go")
	bad := func(format string, args ...any) error {
		p := prog.Position(base)
		return &interp.Error{File: rel, Line: p.Line, Col: p.Column, Msg: fmt.Sprintf(format, args...)}
	}
	v, ok := prog.Var(base)
	if !ok {
		if !token.IsIdentifier(base) {
			return nil, &interp.Error{File: rel, Msg: fmt.Sprintf("a task file must declare a var named after the file, "+
				"and %s is no Go identifier: rename the file to %s.go", base, identifier(base))}
		}
		return nil, &interp.Error{File: rel, Msg: fmt.Sprintf("a task file must declare var %s = func(args...) any", base)}
	}
	if v.Kind() != reflect.Func {
		return nil, bad("%s must be a func, not %s", base, v.Type())
	}
	if v.IsNil() {
		return nil, bad("%s is a nil func", base)
	}
	t := v.Type()
	switch {
	case t.NumOut() > 2:
		return nil, bad("%s returns %d results; a task returns (), (T), error or (T, error)", base, t.NumOut())
	case t.NumOut() == 2 && t.Out(1) != typeError:
		return nil, bad("%s: the second result must be error, not %s", base, t.Out(1))
	}
	var limits jstask.Limits
	if base != retryVar { // a task file retry.go holds its func there
		var msg string
		if limits, msg = taskRetry(prog.Var(retryVar)); msg != "" { // task_retry.go
			return nil, bad("%s", msg)
		}
	}
	tf := &taskFunc{rel: rel, name: base, fn: v, variadic: t.IsVariadic(), limits: limits}
	for i := 0; i < t.NumIn(); i++ {
		pt := t.In(i)
		var p taskParam
		pv, provided := regOf(l.app).provided[pt]
		switch kind := kindOf(pt); {
		case kind == argGoContext:
			p.kind = argGoContext
		case kind == argApp:
			p.kind, p.inject = argApp, reflect.ValueOf(l.app)
		case kind == argDB:
			p.kind, p.inject = argProvided, reflect.ValueOf(l.db.pool)
		case pt == typeTaskInfo:
			p.kind = argTaskInfo
		case provided:
			p.kind, p.inject = argProvided, pv
		default:
			tf.positional = append(tf.positional, pt)
			tf.varArgs = tf.variadic && i == t.NumIn()-1
		}
		tf.params = append(tf.params, p)
	}
	return tf, nil
}

// args converts the JSON arguments to the func's parameter types
// (taskproto.DecodeArgs) and adds the injected parameters.
func (tf *taskFunc) args(ctx context.Context, info *TaskInfo, raw json.RawMessage) ([]reflect.Value, error) {
	pos, err := taskproto.DecodeArgs(raw, tf.name, tf.positional, tf.varArgs)
	if err != nil {
		return nil, err
	}
	in := make([]reflect.Value, 0, len(tf.params))
	for _, p := range tf.params {
		switch p.kind {
		case argGoContext:
			in = append(in, reflect.ValueOf(ctx))
		case argTaskInfo:
			in = append(in, reflect.ValueOf(info))
		case argApp, argProvided:
			in = append(in, p.inject)
		default:
			in, pos = append(in, pos[0]), pos[1:]
		}
	}
	return in, nil
}

// call runs the func and sorts its results.
func (tf *taskFunc) call(in []reflect.Value) (any, error) {
	var out []reflect.Value
	if tf.variadic {
		out = tf.fn.CallSlice(in)
	} else {
		out = tf.fn.Call(in)
	}
	switch len(out) {
	case 0:
		return nil, nil
	case 1:
		if tf.fn.Type().Out(0) == typeError {
			err, _ := out[0].Interface().(error)
			return nil, err
		}
		return out[0].Interface(), nil
	}
	if err, _ := out[1].Interface().(error); err != nil {
		return nil, err
	}
	return out[0].Interface(), nil
}
