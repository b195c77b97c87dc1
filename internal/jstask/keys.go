package jstask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The idempotency key of a task is its message id in the task stream
// (Nats-Msg-Id), which JetStream remembers for Config.DuplicateWindow in
// a table each server keeps in memory. A server that restarts rebuilds
// it from the tasks still stored: the key of a task that ended (removed
// from the work queue) is forgotten, and a second dispatch of the key
// within the window would run the task again. So a worker records the
// key of a keyed task in the runs bucket before its end is stored, and
// Dispatch checks that record first.

// keyPrefix names the records of the keys of ended tasks in the runs
// bucket: "key.<sha256 of the key, hex>", holding the task's id.
const keyPrefix = "key."

// keyName is the runs bucket's key of an idempotency key.
func keyName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return keyPrefix + hex.EncodeToString(sum[:16])
}

// markKey records that the keyed task t ended, before its end is stored
// and it leaves its queue. A failure is logged: the task's end goes on.
func (w *Worker) markKey(t Task) {
	if t.Key == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := w.runs.Put(ctx, keyName(t.Key), []byte(strconv.FormatInt(t.ID, 10))); err != nil {
		w.cfg.Logger.Warn("zealgo: jstask: record the key of an ended task", "id", t.ID, "err", err)
	}
}

// keyEnded reports whether a task with key ended within the duplicate
// window, from the runs bucket, read from any of its
// replicas (a direct get). No answer within keyWait reports none: the
// dispatch then relies on the task stream's own table.
func (c *Client) keyEnded(ctx context.Context, key string) bool {
	prefix := c.js.Options().APIPrefix
	if prefix == "" {
		prefix = jetstream.DefaultAPIPrefix
	}
	subj := "$KV." + c.n.runs + "." + keyName(key)
	ctx, cancel := context.WithTimeout(ctx, keyWait)
	defer cancel()
	m, err := c.js.Conn().RequestWithContext(ctx, prefix+"DIRECT.GET.KV_"+c.n.runs+"."+subj, nil)
	if err != nil || m.Header.Get("Status") != "" || m.Header.Get("KV-Operation") != "" {
		return false // none, deleted, or no answer
	}
	at, err := time.Parse(time.RFC3339Nano, m.Header.Get("Nats-Time-Stamp"))
	return err == nil && time.Since(at) <= c.cfg.DuplicateWindow
}

// keyWait bounds the check of a key in the runs bucket.
const keyWait = 500 * time.Millisecond
