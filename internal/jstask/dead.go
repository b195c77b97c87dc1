package jstask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DeadTask is a task given up, as the dead-letter stream keeps it.
type DeadTask struct {
	Task
	// Kind and Error are its last failure (KindError, KindDeliveries, ...).
	Kind  string `json:"kind"`
	Error string `json:"error"`
	// Deliveries is how many times it was delivered.
	Deliveries int `json:"deliveries"`
	// Buried is when it was given up.
	Buried time.Time `json:"buried"`
}

// bury copies the task into the dead-letter stream with its failure. A
// failure to do so is logged: the failure still reaches the dispatcher.
func (w *Worker) bury(m jetstream.Msg, t Task, runErr error, n int) {
	te := asTaskError(runErr)
	msg := nats.NewMsg(w.n.deadPref + strconv.FormatInt(t.ID, 10))
	msg.Data = m.Data()
	msg.Header.Set(hdrID, strconv.FormatInt(t.ID, 10))
	msg.Header.Set(hdrInstance, t.Instance)
	msg.Header.Set(hdrHandler, t.Handler)
	msg.Header.Set(hdrKind, te.Kind)
	msg.Header.Set(hdrMsg, strings.ReplaceAll(te.Msg, "\n", " "))
	msg.Header.Set(hdrDeliveries, strconv.Itoa(n))
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := w.js.PublishMsg(ctx, msg, jetstream.WithMsgID("dead-"+strconv.FormatInt(t.ID, 10)),
			jetstream.WithExpectStream(w.n.dead))
		cancel()
		if err == nil {
			w.cfg.Logger.Warn("zealgo: jstask: task given up, kept in the dead letters", "id", t.ID, "task", t.Handler,
				"kind", te.Kind, "deliveries", n)
			return
		} else if !transient(err) {
			w.cfg.Logger.Error("zealgo: jstask: task not kept in the dead letters", "id", t.ID, "err", err)
			return
		}
	}
	w.cfg.Logger.Error("zealgo: jstask: task not kept in the dead letters: NATS does not answer", "id", t.ID)
}

// asTaskError returns err as a TaskError: KindError for a plain error.
func asTaskError(err error) *TaskError {
	var te *TaskError
	if !errors.As(err, &te) {
		te = &TaskError{Kind: KindError, Msg: err.Error()}
	}
	if te.Kind == "" {
		te = &TaskError{Kind: KindError, Msg: te.Msg}
	}
	return te
}

// Dead is the administration of the dead-letter stream (zealgo tasks).
type Dead struct {
	js   jetstream.JetStream
	cfg  Config
	n    names
	turn atomic.Uint64 // the task stream of the next retried task without a key
}

// OpenDead returns the dead letters of the streams named after cfg.Prefix.
// Without cfg.Streams, the task streams that Retry spreads its tasks over
// are those on the server.
func OpenDead(ctx context.Context, js jetstream.JetStream, cfg Config) (*Dead, error) {
	if cfg.Streams <= 0 {
		probe, err := cfg.withDefaults()
		if err != nil {
			return nil, err
		}
		if cfg.Streams, err = taskStreamCount(ctx, js, probe); err != nil {
			return nil, err
		}
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	d := &Dead{js: js, cfg: cfg, n: cfg.names()}
	d.turn.Store(rand.Uint64N(uint64(cfg.Streams))) // separate runs of zealgo tasks retry start anywhere
	if _, err := js.Stream(ctx, d.n.dead); err != nil {
		return nil, fmt.Errorf("zealgo: jstask: dead letters (stream %s): %w", d.n.dead, err)
	}
	return d, nil
}

// List returns the dead tasks, oldest first, at most limit (0: all).
func (d *Dead) List(ctx context.Context, limit int) ([]DeadTask, error) {
	st, err := d.js.Stream(ctx, d.n.dead)
	if err != nil {
		return nil, fmt.Errorf("zealgo: jstask: dead letters: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("zealgo: jstask: dead letters: %w", err)
	}
	var out []DeadTask
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("zealgo: jstask: dead letters: %w", err)
		}
		out = append(out, deadTask(m))
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// Get returns the dead task of id, or an error wrapping
// jetstream.ErrMsgNotFound.
func (d *Dead) Get(ctx context.Context, id int64) (DeadTask, error) {
	m, err := d.get(ctx, id)
	if err != nil {
		return DeadTask{}, err
	}
	return deadTask(m), nil
}

func (d *Dead) get(ctx context.Context, id int64) (*jetstream.RawStreamMsg, error) {
	st, err := d.js.Stream(ctx, d.n.dead)
	if err != nil {
		return nil, fmt.Errorf("zealgo: jstask: dead letters: %w", err)
	}
	m, err := st.GetLastMsgForSubject(ctx, d.n.deadPref+strconv.FormatInt(id, 10))
	if err != nil {
		return nil, fmt.Errorf("zealgo: jstask: dead task %d: %w", id, err)
	}
	return m, nil
}

// Retry dispatches the dead task of id again, for the instance that
// dispatched it, under a new id (the old one's failure was reported), and
// removes it from the dead letters. It returns the new id. The task goes
// to the task streams as Dispatch sends it: one with a key to its key's
// stream (without the key, which the first dispatch holds within
// Config.DuplicateWindow), others to each stream in turn.
func (d *Dead) Retry(ctx context.Context, id int64) (int64, error) {
	m, err := d.get(ctx, id)
	if err != nil {
		return 0, err
	}
	dt := deadTask(m)
	if !tokenRE.MatchString(dt.Instance) {
		return 0, fmt.Errorf("zealgo: jstask: dead task %d names no instance to report to", id)
	}
	c := &Client{js: d.js, cfg: d.cfg, n: d.n, instance: dt.Instance}
	home := int(d.turn.Add(1) % uint64(d.cfg.Streams))
	if dt.Key != "" {
		home = c.home(dt.Task)
	}
	// Dispatch's first stream for a task without a key is the next in turn.
	c.turn.Store(uint64(home + d.cfg.Streams - 1))
	t := dt.Task
	t.ID, t.Key = 0, ""
	newID, err := c.Dispatch(ctx, t)
	if err != nil {
		return 0, err
	}
	return newID, d.remove(ctx, m.Sequence)
}

// Purge removes the dead task of id, or every dead task when id is 0,
// and returns how many it removed.
func (d *Dead) Purge(ctx context.Context, id int64) (uint64, error) {
	st, err := d.js.Stream(ctx, d.n.dead)
	if err != nil {
		return 0, fmt.Errorf("zealgo: jstask: dead letters: %w", err)
	}
	if id != 0 {
		m, err := d.get(ctx, id)
		if err != nil {
			return 0, err
		}
		return 1, d.remove(ctx, m.Sequence)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("zealgo: jstask: dead letters: %w", err)
	}
	if err := st.Purge(ctx); err != nil {
		return 0, fmt.Errorf("zealgo: jstask: purge dead letters: %w", err)
	}
	return info.State.Msgs, nil
}

func (d *Dead) remove(ctx context.Context, seq uint64) error {
	st, err := d.js.Stream(ctx, d.n.dead)
	if err == nil {
		err = st.DeleteMsg(ctx, seq)
	}
	if err != nil {
		return fmt.Errorf("zealgo: jstask: remove dead task: %w", err)
	}
	return nil
}

// deadTask decodes a dead letter: the task's body and its failure in the
// headers.
func deadTask(m *jetstream.RawStreamMsg) DeadTask {
	var dt DeadTask
	_ = json.Unmarshal(m.Data, &dt.Task)
	dt.ID, _ = strconv.ParseInt(m.Header.Get(hdrID), 10, 64)
	if dt.Handler == "" {
		dt.Handler = m.Header.Get(hdrHandler)
	}
	if dt.Instance == "" {
		dt.Instance = m.Header.Get(hdrInstance)
	}
	dt.Kind, dt.Error = m.Header.Get(hdrKind), m.Header.Get(hdrMsg)
	dt.Deliveries, _ = strconv.Atoi(m.Header.Get(hdrDeliveries))
	dt.Buried = m.Time
	return dt
}
