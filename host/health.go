package host

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"
)

// readyTimeout bounds each check of a readiness request.
const readyTimeout = 2 * time.Second

// healthState remembers the outcome of each readiness check, to log only
// its changes.
type healthState struct {
	mu   sync.Mutex
	last map[string]string
}

// readyProbe is one check of the readiness request, asked of the
// component it names: applies is false when the component is not in use.
type readyProbe struct {
	name  string
	check func(ctx context.Context) (applies bool, err error)
}

// healthLayer answers the liveness and readiness checks before anything
// else sees the request.
func (o *opsState) healthLayer(next http.Handler, cfg *OpsConfig, probes []readyProbe) http.Handler {
	live, ready := cfg.HealthPath, cfg.ReadyPath
	if live == "" && ready == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == live && live != "":
			answerHealth(w, r, http.StatusOK, map[string]any{"status": "ok"})
		case p == ready && ready != "":
			status, body := o.readiness(r.Context(), probes)
			answerHealth(w, r, status, body)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// answerHealth writes a check's JSON answer to GET and HEAD; other
// methods get 405.
func answerHealth(w http.ResponseWriter, r *http.Request, status int, body map[string]any) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		status, body = http.StatusMethodNotAllowed, map[string]any{"error": CodeMethodNotAllowed, "allowed": []string{"GET", "HEAD"}}
	}
	b, _ := json.Marshal(body)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(append(b, '\n'))
	}
}

// readiness runs the readiness checks: the server is not draining, the
// database answers a ping, NATS (if used) is connected, the task backend
// (if any) is ready. Each
// check reads "ok" or what is wrong in a word; the reasons go to the log
// when a check changes.
func (o *opsState) readiness(ctx context.Context, probes []readyProbe) (int, map[string]any) {
	checks := map[string]string{"started": "ok"}
	if o.draining.Load() {
		checks["started"] = "draining"
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for _, p := range probes {
		if applies, err := p.check(ctx); applies {
			checks[p.name] = o.check(p.name, err)
		}
	}
	status, word := http.StatusOK, "ready"
	for _, v := range checks {
		if v != "ok" {
			status, word = http.StatusServiceUnavailable, "not ready"
		}
	}
	return status, map[string]any{"status": word, "checks": checks}
}

// check turns a check's error into its word, logging a change.
func (o *opsState) check(name string, err error) string {
	word, reason := "ok", ""
	if err != nil {
		word, reason = "down", err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			word = "timeout"
		}
	}
	hs := &o.health
	hs.mu.Lock()
	prev, seen := hs.last[name]
	if hs.last == nil {
		hs.last = map[string]string{}
	}
	hs.last[name] = reason
	hs.mu.Unlock()
	switch {
	case err != nil && (!seen || prev != reason):
		o.log.Warn("zealgo: readiness check failing", "check", name, "err", err)
	case err == nil && seen && prev != "":
		o.log.Info("zealgo: readiness check passing again", "check", name)
	}
	return word
}
