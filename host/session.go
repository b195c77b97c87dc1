package host

import (
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"reflect"
	"sync"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v5"

	"github.com/zealgo/zealgo/internal/sessionstore"
)

// Session is the session of a request (the spec's $_SESSION), reached as
// api.G().Session or host.RequestContextOf(r).Session. It is loaded on first use,
// so a request that never touches it reads no cookie and no store, and
// its changes are saved, with the cookie, just before the response header
// is sent. The cookie holds only the signed session id; the values stay on
// the server (files under the data directory, or Redis).
//
// Values survive a round trip through encoding/gob: strings, numbers,
// bools, []byte, time.Time, []any and map[string]any are ready to use;
// other types need gob.Register in the application.
//
// A Session is safe for use by several goroutines of one request.
type Session struct {
	mu     sync.Mutex
	m      *sessionstore.Manager // nil outside an application
	log    *slog.Logger
	r      *http.Request
	res    *echo.Response // the request's outermost response (reqState.res), nil outside a request
	s      *sessions.Session
	loaded bool
	had    bool // the request brought a valid session
	dirty  bool
	saved  bool
	bound  bool
}

// load reads the session of the request, once.
func (s *Session) load() {
	if s.loaded {
		return
	}
	s.loaded = true
	if s.m == nil {
		s.s = sessions.NewSession(nil, "")
		return
	}
	sess, err := s.m.Load(s.r)
	if err != nil {
		s.log.Error("zealgo: session load failed; the request has no session", "request_id", requestID(s.r), "err", err)
	}
	s.s, s.had = sess, !sess.IsNew
	if res := s.res; res != nil {
		// Saved before the header goes out whatever writes it: a handler,
		// or middleware that answers by itself.
		res.Before(func() {
			if err := s.save(res); err != nil {
				s.log.Error("zealgo: session save failed", "request_id", requestID(s.r), "err", err)
			}
		})
	}
}

// bind saves the session just before res sends its header; a failure
// turns the response into a 500 internal_error.
func (s *Session) bind(res *Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bound || res == nil {
		return
	}
	s.bound = true
	res.BeforeCommit(func(res *Response) {
		if err := s.save(res); err != nil {
			id := requestID(s.r)
			s.log.Error("zealgo: session save failed", "request_id", id, "err", err)
			writeError(res, s.r, internalError(id))
		}
	})
}

// Get returns the value stored under key and whether there is one.
func (s *Session) Get(key string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	v, ok := s.s.Values[key]
	return v, ok
}

// Int64 returns the value stored under key as an int64, and whether it is
// present and a whole number of any integer or float kind that fits.
func (s *Session) Int64(key string) (int64, bool) {
	v, ok := s.Get(key)
	if !ok || v == nil {
		return 0, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		return int64(u), u <= math.MaxInt64
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

// String returns the value stored under key as a string: a string as it
// is, another value formatted with fmt, "" when there is none.
func (s *Session) String(key string) string {
	v, ok := s.Get(key)
	if !ok || v == nil {
		return ""
	}
	if str, ok := v.(string); ok {
		return str
	}
	return fmt.Sprint(v)
}

// Set stores v under key. A request without a session gets one, with a
// new id, when the response is sent.
func (s *Session) Set(key string, v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	s.warnLate()
	s.s.Values[key] = v
	if s.s.ID == "" && s.m != nil {
		s.s.ID = sessionstore.NewID()
	}
	s.dirty = true
}

// Delete removes the value stored under key. A session left empty is
// removed from the store and its cookie cleared.
func (s *Session) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	if _, ok := s.s.Values[key]; ok {
		s.warnLate()
		delete(s.s.Values, key)
		s.dirty = true
	}
}

// Rotate gives the session a new id and keeps its values; the old id is
// removed from the store at once and no longer works. Call it when the
// user logs in or out, against session fixation.
func (s *Session) Rotate() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	s.warnLate()
	if s.m == nil {
		return nil
	}
	if s.s.ID != "" {
		if err := s.m.Delete(s.r, s.s.ID); err != nil {
			return fmt.Errorf("zealgo: session rotate: %w", err)
		}
	}
	s.s.ID = sessionstore.NewID()
	s.dirty = true
	return nil
}

// Destroy drops every value and the id: the session is removed from the
// store at once and the cookie cleared. A value set afterwards starts a new
// session with a new id.
func (s *Session) Destroy() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	s.warnLate()
	id := s.s.ID
	s.s.Values = map[any]any{}
	s.s.ID = ""
	s.dirty = true
	if id != "" && s.m != nil {
		if err := s.m.Delete(s.r, id); err != nil {
			return fmt.Errorf("zealgo: session destroy: %w", err)
		}
	}
	return nil
}

// ID returns the session id, or "" when the request has no session (one
// is made when a value is first set).
func (s *Session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	return s.s.ID
}

// warnLate logs a change made after the session was saved: the header,
// and with it the cookie, has gone.
func (s *Session) warnLate() {
	if s.saved && s.m != nil {
		s.log.Warn("zealgo: session changed after the response header was sent; the change is lost",
			"request_id", requestID(s.r))
	}
}

// save writes a changed session to the store and sets or clears its
// cookie on w, once.
func (s *Session) save(w http.ResponseWriter) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded || !s.dirty || s.saved || s.m == nil {
		return nil
	}
	s.saved = true
	if len(s.s.Values) == 0 {
		if s.s.ID != "" {
			if err := s.m.Delete(s.r, s.s.ID); err != nil {
				return err
			}
		}
		if _, err := s.r.Cookie(s.m.CookieName()); err == nil || s.had {
			s.m.ClearCookie(w, s.r)
		}
		return nil
	}
	return s.m.Save(s.r, w, s.s)
}

// raw returns the loaded gorilla session, for the store's Get.
func (s *Session) raw() *sessions.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	return s.s
}

// savedBy marks the session saved when the store saved it for someone
// else (echo-contrib's sess.Save).
func (s *Session) savedBy(sess *sessions.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.s == sess {
		s.dirty = false
	}
}

// requestSession is the session engine's Config.Current: the session a
// request of this application (of manager m) has already loaded, so that
// the store's Get returns it rather than a second copy.
func requestSession(r *http.Request, m *sessionstore.Manager) *sessions.Session {
	if g := contextOf(r); g != nil && g.Session.m != nil && g.Session.m == m {
		return g.Session.raw()
	}
	return nil
}

// sessionSaved is the session engine's Config.Saved: a session the store
// saved for someone else (echo-contrib's sess.Save) is not saved again.
func sessionSaved(r *http.Request, sess *sessions.Session) {
	if g := contextOf(r); g != nil {
		g.Session.savedBy(sess)
	}
}
