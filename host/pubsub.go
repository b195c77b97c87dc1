package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/zealgo/zealgo/interp"
)

// Publish and subscribe (App.Publish, App.Subscribe): on NATS through
// core NATS subjects zealgo.pub.<subject>, which reach every instance
// and task worker on it; without NATS in the server process.

// pubSubjectPrefix puts the application's subjects apart from zealgo's
// own.
const pubSubjectPrefix = "zealgo.pub."

// subscriptionBuffer is how many messages an in-process subscription
// holds for its func before it drops the next ones (as a slow NATS
// consumer does).
const subscriptionBuffer = 1024

// errSubscribeNoNATS: a task worker receives nothing without NATS.
var errSubscribeNoNATS = errors.New("zealgo: Subscribe from a task needs NATS (--nats): a task worker without it receives no messages")

// subscription is an in-process subscription.
type subscription struct {
	tokens []string
	in     chan string
	done   chan struct{}
}

// checkSubject checks a subject: tokens of letters, digits, '-' and '_'
// separated by '.'; a subscription's may hold '*' (one token) and a last
// '>' (the rest).
func checkSubject(subject string, wildcards bool) error {
	tokens := strings.Split(subject, ".")
	for i, t := range tokens {
		switch {
		case wildcards && (t == "*" || t == ">" && i == len(tokens)-1):
		case !plainName(t):
			what := "letters, digits, '-' or '_'"
			if wildcards {
				what += ", '*', or a last '>'"
			}
			return fmt.Errorf("zealgo: subject %q: want tokens of %s separated by '.'", subject, what)
		}
	}
	if len(subject) > 256 {
		return fmt.Errorf("zealgo: subject of %d bytes: the bound is 256", len(subject))
	}
	return nil
}

// matchSubject reports whether subject matches the tokens of a
// subscription.
func matchSubject(tokens []string, subject string) bool {
	parts := strings.Split(subject, ".")
	for i, t := range tokens {
		if t == ">" {
			return len(parts) > i
		}
		if i >= len(parts) || t != "*" && t != parts[i] {
			return false
		}
	}
	return len(parts) == len(tokens)
}

// publish sends msg to the subscribers of subject.
func (s *sharedState) publish(subject, msg string) error {
	if err := checkSubject(subject, false); err != nil {
		return err
	}
	if s.calls != nil {
		return s.call(callPublish, subject, msg)
	}
	nc, err := s.natsConn()
	if err != nil {
		return err
	}
	if nc == nil {
		s.deliverLocal(subject, msg)
		return nil
	}
	if err := nc.Publish(pubSubjectPrefix+subject, []byte(msg)); err != nil {
		return fmt.Errorf("zealgo: publish %s: %w", subject, err)
	}
	if s.worker { // a task's messages go out before its result
		if err := nc.FlushTimeout(5 * time.Second); err != nil {
			return fmt.Errorf("zealgo: publish %s: %w", subject, err)
		}
	}
	return nil
}

// subscribe calls fn with each message published to a subject matching
// subject from now on, until ctx is done or unsubscribe is called.
func (s *sharedState) subscribe(ctx context.Context, subject string, fn func(msg string)) (func(), error) {
	if err := checkSubject(subject, true); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, errors.New("zealgo: subscribe: the func is nil")
	}
	if s.calls != nil {
		return nil, errSubscribeNoNATS
	}
	nc, err := s.natsConn()
	if err != nil {
		return nil, err
	}
	var stop func()
	if nc == nil {
		stop = s.subscribeLocal(ctx, subject, fn)
	} else {
		sub, err := nc.Subscribe(pubSubjectPrefix+subject, func(m *nats.Msg) { s.call1(ctx, subject, fn, string(m.Data)) })
		if err != nil {
			return nil, fmt.Errorf("zealgo: subscribe %s: %w", subject, err)
		}
		if err := nc.Flush(); err != nil { // the server knows of it when Subscribe returns
			_ = sub.Unsubscribe()
			return nil, fmt.Errorf("zealgo: subscribe %s: %w", subject, err)
		}
		stop = func() { _ = sub.Unsubscribe() }
	}
	after := context.AfterFunc(ctx, stop)
	return func() { after(); stop() }, nil
}

// subscribeLocal subscribes in the process.
func (s *sharedState) subscribeLocal(ctx context.Context, subject string, fn func(msg string)) func() {
	sub := &subscription{tokens: strings.Split(subject, "."), in: make(chan string, subscriptionBuffer), done: make(chan struct{})}
	s.mu.Lock()
	if s.subs == nil {
		s.subs = map[*subscription]struct{}{}
	}
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	go func() {
		for {
			select {
			case msg := <-sub.in:
				s.call1(ctx, subject, fn, msg)
			case <-sub.done:
				return
			}
		}
	}()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.subs[sub]; ok {
			delete(s.subs, sub)
			close(sub.done)
		}
	}
}

// deliverLocal queues msg for the in-process subscriptions to subject.
func (s *sharedState) deliverLocal(subject, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.subs {
		if !matchSubject(sub.tokens, subject) {
			continue
		}
		select {
		case sub.in <- msg:
		default:
			s.logger().Warn("zealgo: subscription too slow: message dropped", "subject", subject)
		}
	}
}

// call1 calls a subscription's fn, logging a panic; not once ctx is
// done, though the subscription may not have stopped yet.
func (s *sharedState) call1(ctx context.Context, subject string, fn func(string), msg string) {
	if ctx.Err() != nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			v, frames := interp.Recovered(p)
			if frames == nil {
				frames = interp.PanicFrames(2)
			}
			s.logger().Error("subscription panic", "subject", subject, "panic", interp.DescribePanic(v),
				"stack", interp.FormatFrames(frames))
		}
	}()
	fn(msg)
}

// close ends the in-process subscriptions; those on NATS end with its
// connection.
func (s *sharedState) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.subs {
		close(sub.done)
	}
	s.subs = nil
}
