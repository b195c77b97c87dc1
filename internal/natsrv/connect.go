package natsrv

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ConnectOptions configures a client connection.
type ConnectOptions struct {
	// Name identifies the connection in the server's monitoring.
	Name string
	// Token authenticates to a server that requires one.
	Token string
	// Timeout bounds the wait for the server and for JetStream to answer;
	// default 10s. Once connected, a lost connection is retried for ever.
	Timeout time.Duration
	// ReconnectWait is the pause between reconnection attempts; default
	// 250ms.
	ReconnectWait time.Duration
}

// Conn is a client connection with JetStream.
type Conn struct {
	// NC is the core connection.
	NC *nats.Conn
	// JS is its JetStream context.
	JS jetstream.JetStream
}

// Connect connects to the server or cluster at rawURL (comma-separated
// URLs are tried in turn) and returns once JetStream answers there, or
// with an error when that did not happen within opts.Timeout or ctx.
func Connect(ctx context.Context, rawURL string, opts ConnectOptions) (*Conn, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	nc, err := dial(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	// An asynchronous publish whose acknowledgement never comes (sent to
	// a stream leader that died) is given up after publishAsyncTimeout,
	// so that it does not hold a place in the window of pending
	// publishes forever; the caller has retried it long before.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(publishAsyncTimeout))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("zealgo: nats: %w", err)
	}
	if err := waitJetStream(ctx, js); err != nil {
		nc.Close()
		return nil, fmt.Errorf("zealgo: nats: %s: JetStream is not available: %w", redact(rawURL), err)
	}
	return &Conn{NC: nc, JS: js}, nil
}

// dial opens the core connection, retrying until ctx is done: a server
// that is starting up is waited for.
func dial(ctx context.Context, rawURL string, opts ConnectOptions) (*nats.Conn, error) {
	wait := opts.ReconnectWait
	if wait <= 0 {
		wait = 250 * time.Millisecond
	}
	o := []nats.Option{
		nats.Name(opts.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(wait),
		nats.Timeout(2 * time.Second),
		nats.DrainTimeout(5 * time.Second),
	}
	if opts.Token != "" {
		o = append(o, nats.Token(opts.Token))
	}
	for {
		nc, err := nats.Connect(rawURL, o...)
		if err == nil {
			return nc, nil
		}
		if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrBadSubject) {
			return nil, fmt.Errorf("zealgo: nats: %s refused the connection: %w", redact(rawURL), err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("zealgo: nats: cannot connect to %s: %w", redact(rawURL), err)
		case <-time.After(wait):
		}
	}
}

// waitJetStream asks for the account's JetStream information until it
// comes: a server that has just restarted may still be recovering its
// streams.
func waitJetStream(ctx context.Context, js jetstream.JetStream) error {
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := js.AccountInfo(actx)
		cancel()
		if err == nil || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close drains the connection, so that pending publishes are flushed and
// subscriptions end, and returns once it is closed (5s at most).
func (c *Conn) Close() {
	if err := c.NC.Drain(); err != nil {
		c.NC.Close()
		return
	}
	for deadline := time.Now().Add(5 * time.Second); !c.NC.IsClosed(); {
		if time.Now().After(deadline) {
			c.NC.Close()
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// redact removes a password or token from a URL for messages.
func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL
	}
	u.User = url.User("redacted")
	return u.String()
}

// Replicas returns the number of copies to keep of each stream and
// bucket: want when it is positive, else 3 when the server is a node of
// a cluster of three servers or more (as its INFO tells the client), else
// 1. A cluster that is still forming is waited for up to wait.
func (c *Conn) Replicas(want int, wait time.Duration) int {
	if want > 0 {
		return want
	}
	if c.NC.ConnectedClusterName() == "" {
		return 1
	}
	for deadline := time.Now().Add(wait); ; {
		if servers(c.NC) >= 3 {
			return 3
		}
		if time.Now().After(deadline) {
			return 1
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// servers counts the distinct servers the client knows of.
func servers(nc *nats.Conn) int {
	seen := map[string]bool{}
	for _, s := range nc.Servers() {
		if u, err := url.Parse(s); err == nil {
			seen[u.Host] = true
		}
	}
	return len(seen)
}

// publishAsyncTimeout bounds the wait for the acknowledgement of an
// asynchronous publish (jetstream.WithPublishAsyncTimeout).
const publishAsyncTimeout = 5 * time.Second
