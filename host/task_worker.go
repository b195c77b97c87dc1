package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/zealgo/zealgo/internal/taskproto"
	"github.com/zealgo/zealgo/interp"
)

// cmdWorker is the hidden worker command: the server starts its own
// executable with it, and the process serves tasks over its standard input
// and output until the server tells it to stop or goes away.
func (a *App) cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "zealgo worker: takes no arguments; the server starts it and configures it over standard input")
		return 2
	}
	if stdout == io.Writer(os.Stdout) {
		// Standard output carries the protocol: keep stray prints off it.
		os.Stdout = os.Stderr
	}
	if err := a.serveWorker(ctx, os.Stdin, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// taskWorker runs the tasks of one worker process.
type taskWorker struct {
	a      *App
	cache  *interp.Cache[*taskFunc]
	w      *taskproto.Writer
	ctx    context.Context // given to tasks; done when the server is gone
	wg     sync.WaitGroup
	serial chan *taskproto.Message // nil in coroutine mode
}

// serveWorker is the worker role: it reads its configuration, runs the
// application's OnStart hooks (a value given to Provide that opens there,
// such as a store, is then ready inside tasks), then runs each task it is
// sent and reports its end, until Stop (or ctx is done): then it lets its
// running tasks finish and returns. Cancel cancels the running tasks'
// context: the server sends it at the shutdown deadline. When its input
// ends, the server is gone and it returns at once. The OnStop hooks run
// as it returns.
//
// A signal that ends ctx (SIGTERM, as systemd sends to every process of a
// service) does not cancel the tasks: the server, which gets it too,
// decides when to cancel them, at its shutdown deadline.
func (a *App) serveWorker(ctx context.Context, in io.Reader, out, stderr io.Writer) error {
	r, w := taskproto.NewReader(in, 0), taskproto.NewWriter(out, 0)
	m, err := r.Read()
	if err != nil {
		return fmt.Errorf("zealgo: worker: reading the configuration: %w", err)
	}
	if m.Kind != taskproto.KindInit {
		return fmt.Errorf("zealgo: worker: first message is %s, want init", m.Kind)
	}
	var cfg workerConfig
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		return fmt.Errorf("zealgo: worker: configuration: %w", err)
	}
	a.cfg.Root, a.cfg.DataDir, a.cfg.TaskEnableCoroutine, a.cfg.Dev = cfg.Root, cfg.DataDir, cfg.Coroutine, cfg.Dev
	if cfg.Debounce > 0 {
		a.cfg.ReloadDebounce = cfg.Debounce
	}
	a.cfg.TaskWorkerNum = 0 // a task does not dispatch tasks from a worker
	if a.cfg.Logger == nil {
		a.cfg.Logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a.started, a.worker = true, true
	if err := a.prepare(); err != nil {
		return err
	}
	defer a.lifecycle.stop() // also after a failed OnStart, as App.Close does
	if err := a.lifecycle.start(a); err != nil {
		return fmt.Errorf("zealgo: worker: %w", err)
	}
	cache, err := interp.NewCache(a.buildTask, a.cacheOptions())
	if err != nil {
		return err
	}
	defer cache.Close()
	tctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wk := &taskWorker{a: a, cache: cache, w: w, ctx: tctx}
	if !cfg.Coroutine {
		wk.serial = make(chan *taskproto.Message, 1024)
		go func() {
			for m := range wk.serial {
				wk.run(m)
			}
		}()
	}
	if err := w.Write(&taskproto.Message{Kind: taskproto.KindReady, PID: os.Getpid(), Version: taskproto.Version}); err != nil {
		return fmt.Errorf("zealgo: worker: %w", err)
	}

	stop, gone := make(chan struct{}), make(chan error, 1)
	go func() {
		var once sync.Once
		for {
			m, err := r.Read()
			if err != nil {
				gone <- err
				return
			}
			switch m.Kind {
			case taskproto.KindRun:
				wk.start(m)
			case taskproto.KindStop:
				once.Do(func() { close(stop) })
			case taskproto.KindCancel:
				cancel()
			default:
				a.log.Warn("zealgo: worker: unexpected message", "kind", m.Kind.String())
			}
		}
	}()
	select {
	case err := <-gone:
		return wk.lost(err)
	case <-stop:
	case <-ctx.Done():
	}
	idle := make(chan struct{})
	go func() { wk.wg.Wait(); close(idle) }()
	select {
	case <-idle:
		return nil
	case err := <-gone:
		return wk.lost(err)
	}
}

// lost ends a worker whose server is gone: its tasks are abandoned.
func (wk *taskWorker) lost(err error) error {
	if err == io.EOF {
		return nil
	}
	return fmt.Errorf("zealgo: worker: %w", err)
}

// start runs a task in its own goroutine, or queues it in serial mode.
func (wk *taskWorker) start(m *taskproto.Message) {
	wk.wg.Add(1)
	if wk.serial != nil {
		wk.serial <- m
		return
	}
	go wk.run(m)
}

// run runs one task and reports its end.
func (wk *taskWorker) run(m *taskproto.Message) {
	defer wk.wg.Done()
	res := &taskproto.Message{Kind: taskproto.KindDone, ID: m.ID}
	out, fail, err := wk.a.callTask(wk.ctx, wk.cache, m.ID, m.Task, m.Args)
	if err != nil {
		res.Fail, res.Err = fail, err.Error()
	} else {
		res.Result = out
	}
	err = wk.w.Write(res)
	if errors.Is(err, taskproto.ErrFrameTooLarge) {
		err = wk.w.Write(&taskproto.Message{Kind: taskproto.KindDone, ID: m.ID, Fail: "result",
			Err: fmt.Sprintf("the result is %d bytes encoded, over the bound of %d", len(res.Result)+len(res.Err), taskproto.MaxFrame)})
	}
	if err != nil {
		wk.a.log.Error("zealgo: worker: reporting a task", "id", m.ID, "err", err)
	}
}

// callTask loads the task file and runs its func with args. It returns
// the JSON-encoded result, or the failure class and the error.
func (a *App) callTask(ctx context.Context, cache *interp.Cache[*taskFunc], id int64, name string, args json.RawMessage) (out json.RawMessage, fail string, err error) {
	if !validName(name) {
		return nil, "load", fmt.Errorf("%q is no task name", name)
	}
	tf, err := cache.Get(filepath.Join(a.dirs.task, name+".go"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "load", fmt.Errorf("there is no file task/%s.go", name)
		}
		return nil, "load", err
	}
	in, err := tf.args(ctx, a, args)
	if err != nil {
		return nil, "args", err
	}
	defer func() {
		if p := recover(); p != nil {
			desc := interp.DescribePanic(p)
			a.log.Error("task panic", "id", id, "file", tf.rel, "panic", desc, "stack", string(debug.Stack()))
			out, fail, err = nil, "panic", errors.New("panic: "+desc)
		}
	}()
	v, err := tf.call(in)
	if err != nil {
		return nil, "error", err
	}
	out, err = json.Marshal(v)
	if err != nil {
		return nil, "result", fmt.Errorf("%s returned %T, which JSON cannot encode: %w", tf.name, v, err)
	}
	return out, "", nil
}

// taskFunc is the func of a task file, with how to fill its parameters.
type taskFunc struct {
	rel, name string
	fn        reflect.Value
	params    []taskParam
	variadic  bool
	nargs     int // positional parameters, the variadic one included
}

// taskParam is one parameter: injected (context.Context, *host.App, a
// provided type) or the next positional argument.
type taskParam struct {
	t      reflect.Type
	kind   argKind // argGoContext, argApp, argProvided, or argZero: positional
	inject reflect.Value
}

// buildTask compiles a task file for the cache.
func (a *App) buildTask(path string) (*taskFunc, error) {
	prog, rel, err := a.compile(a.dirs.task, path)
	if err != nil {
		return nil, err
	}
	return a.analyzeTask(prog, rel)
}

// analyzeTask checks that a task file holds a func named after the file,
// with results (), (T), error or (T, error).
func (a *App) analyzeTask(prog *interp.Program, rel string) (*taskFunc, error) {
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
	tf := &taskFunc{rel: rel, name: base, fn: v, variadic: t.IsVariadic()}
	for i := 0; i < t.NumIn(); i++ {
		pt := t.In(i)
		p := taskParam{t: pt}
		switch kindOf(pt) {
		case argGoContext:
			p.kind = argGoContext
		case argApp:
			p.kind, p.inject = argApp, reflect.ValueOf(a)
		default:
			if pv, ok := a.provided[pt]; ok {
				p.kind, p.inject = argProvided, pv
			} else {
				tf.nargs++
			}
		}
		tf.params = append(tf.params, p)
	}
	return tf, nil
}

// args converts the JSON arguments to the func's parameter types.
func (tf *taskFunc) args(ctx context.Context, a *App, raw json.RawMessage) ([]reflect.Value, error) {
	var list []json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("the arguments are no JSON array: %w", err)
		}
	}
	switch {
	case !tf.variadic && len(list) != tf.nargs:
		return nil, fmt.Errorf("%s takes %d argument(s), got %d", tf.name, tf.nargs, len(list))
	case tf.variadic && len(list) < tf.nargs-1:
		return nil, fmt.Errorf("%s takes at least %d argument(s), got %d", tf.name, tf.nargs-1, len(list))
	}
	in := make([]reflect.Value, 0, len(tf.params))
	next := 0
	for i, p := range tf.params {
		switch p.kind {
		case argGoContext:
			in = append(in, reflect.ValueOf(ctx))
			continue
		case argApp, argProvided:
			in = append(in, p.inject)
			continue
		}
		if tf.variadic && i == len(tf.params)-1 {
			rest := reflect.MakeSlice(p.t, len(list)-next, len(list)-next)
			for k := 0; k < rest.Len(); k++ {
				if err := decodeArg(list[next+k], rest.Index(k).Addr(), next+k+1); err != nil {
					return nil, err
				}
			}
			in = append(in, rest)
			next = len(list)
			continue
		}
		v := reflect.New(p.t)
		if err := decodeArg(list[next], v, next+1); err != nil {
			return nil, err
		}
		in = append(in, v.Elem())
		next++
	}
	return in, nil
}

// decodeArg decodes the n-th (1-based) argument into ptr. It refuses what
// plain JSON decoding would silently turn into a zero value: null for a
// parameter whose type cannot be nil (int, string, a struct...), and an
// object field that the struct it fills does not have, at any depth.
func decodeArg(raw json.RawMessage, ptr reflect.Value, n int) error {
	t := ptr.Elem().Type()
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if nilable(t) {
			return nil // the parameter stays nil
		}
		return fmt.Errorf("argument %d: cannot use JSON null as %s", n, t)
	}
	if t == typeAny || t == typeAnyMap || t == typeAnySlice {
		// Numbers inside untyped values arrive as results do: int64 when
		// whole, float64 otherwise (plain JSON would make 1<<60 a float64).
		v, err := decodeResult(raw)
		if err != nil {
			return fmt.Errorf("argument %d: %w", n, err)
		}
		if rv := reflect.ValueOf(v); rv.IsValid() && rv.Type().AssignableTo(t) {
			ptr.Elem().Set(rv)
			return nil
		}
		return fmt.Errorf("argument %d: cannot use JSON %s as %s", n, jsonKind(v), t)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(ptr.Interface())
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		at := ""
		if te.Field != "" {
			at = " at " + te.Field
		}
		return fmt.Errorf("argument %d%s: cannot use JSON %s as %s", n, at, te.Value, te.Type)
	}
	// DisallowUnknownFields reports `json: unknown field "Y"`, with no
	// type of its own.
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("argument %d: cannot use JSON object with unknown field %s as %s", n, field, t)
	}
	return fmt.Errorf("argument %d: %w", n, err)
}

var (
	typeAny      = reflect.TypeOf((*any)(nil)).Elem()
	typeAnyMap   = reflect.TypeOf(map[string]any(nil))
	typeAnySlice = reflect.TypeOf([]any(nil))
)

// jsonKind names the JSON kind of a decoded value, for errors.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	}
	return "value"
}

// nilable reports whether nil is a value of t.
func nilable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	}
	return false
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
