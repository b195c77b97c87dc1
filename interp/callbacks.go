package interp

import (
	"context"
	"reflect"
	"runtime/debug"
	"time"
)

// Some compiled functions of the standard library call a func they are
// given later, on a goroutine of their own: time.AfterFunc,
// context.AfterFunc. A panic in an interpreted func called there has no
// recover of the host above it and would end the whole process. Each
// interpreter gets its own versions of these functions, which call the
// same standard function with the func wrapped in a recover that reports
// the panic as a goroutine panic (Options.GoPanic). Replacing the symbols,
// rather than rewriting calls in the source, covers every way a file can
// reach them: a direct call, a func value (af := time.AfterFunc), a
// package of the application's imported from source.
//
// Methods cannot be replaced this way; sync.WaitGroup.Go is covered by the
// source rewrite of goguard.go instead.

// guardCallbacks returns the recovering replacements for the packages of
// std (the standard library symbols the interpreter was given) that have
// such functions; report receives a recovered panic and its stack.
func guardCallbacks(std Exports, report func(value any, stack []byte)) Exports {
	guard := func(f func()) func() {
		return func() {
			defer func() {
				if p := recover(); p != nil {
					report(p, debug.Stack())
				}
			}()
			f()
		}
	}
	out := Exports{}
	if _, ok := std["time/time"]; ok {
		out["time/time"] = map[string]reflect.Value{
			"AfterFunc": reflect.ValueOf(func(d time.Duration, f func()) *time.Timer {
				return time.AfterFunc(d, guard(f))
			}),
		}
	}
	if _, ok := std["context/context"]; ok {
		out["context/context"] = map[string]reflect.Value{
			"AfterFunc": reflect.ValueOf(func(ctx context.Context, f func()) (stop func() bool) {
				return context.AfterFunc(ctx, guard(f))
			}),
		}
	}
	return out
}
