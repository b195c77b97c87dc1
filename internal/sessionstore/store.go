package sessionstore

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"net/http"

	"github.com/gorilla/sessions"
)

// store is a Manager as a gorilla sessions.Store: the cookie holds the id
// signed with the secret, the values stay in the backend.
type store struct{ m *Manager }

// Get returns the session of the request: the one Config.Current names
// for the session cookie, else a freshly loaded one.
func (st *store) Get(r *http.Request, name string) (*sessions.Session, error) {
	if cur := st.m.cfg.Current; cur != nil && name == st.m.cfg.CookieName {
		if sess := cur(r); sess != nil {
			return sess, nil
		}
	}
	return st.New(r, name)
}

// New loads the session named by the request's cookie. A missing, forged,
// tampered, expired or unknown cookie gives a new, empty session.
func (st *store) New(r *http.Request, name string) (*sessions.Session, error) {
	sess := sessions.NewSession(st, name)
	opts := st.m.options(r)
	sess.Options = &opts
	sess.IsNew = true
	c, err := r.Cookie(name)
	if err != nil || c.Value == "" {
		return sess, nil
	}
	if err := st.m.ready(); err != nil {
		return sess, err
	}
	var id string
	if err := st.m.codec.Decode(name, c.Value, &id); err != nil || !validID(id) {
		return sess, nil
	}
	ctx, cancel := storeContext(r)
	defer cancel()
	data, err := st.m.cfg.Backend.Load(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return sess, nil
	}
	if err != nil {
		return sess, fmt.Errorf("zealgo: session load: %w", err)
	}
	vals, err := decode(data)
	if err != nil {
		return sess, fmt.Errorf("zealgo: session %s… is unreadable: %w", id[:6], err)
	}
	for k, v := range vals {
		sess.Values[k] = v
	}
	sess.ID, sess.IsNew = id, false
	return sess, nil
}

// Save saves sess and sets its cookie; a negative Options.MaxAge deletes
// it and clears the cookie.
func (st *store) Save(r *http.Request, w http.ResponseWriter, sess *sessions.Session) error {
	if sess.Options != nil && sess.Options.MaxAge < 0 {
		if sess.ID != "" {
			if err := st.m.Delete(r, sess.ID); err != nil {
				return err
			}
		}
		http.SetCookie(w, sessions.NewCookie(sess.Name(), "", sess.Options))
		return nil
	}
	if err := st.m.Save(r, w, sess); err != nil {
		return err
	}
	if saved := st.m.cfg.Saved; saved != nil {
		saved(r, sess)
	}
	return nil
}

// encode gob-encodes the values stored under string keys.
func encode(values map[any]any) ([]byte, error) {
	vals := make(map[string]any, len(values))
	for k, v := range values {
		if ks, ok := k.(string); ok {
			vals[ks] = v
		}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(vals); err != nil {
		return nil, fmt.Errorf("zealgo: session values cannot be stored (gob.Register their types): %w", err)
	}
	return buf.Bytes(), nil
}

func decode(data []byte) (map[string]any, error) {
	var vals map[string]any
	err := gob.NewDecoder(bytes.NewReader(data)).Decode(&vals)
	return vals, err
}
