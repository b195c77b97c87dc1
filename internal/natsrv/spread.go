package natsrv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Spreading the leaders. Each replicated stream of a cluster has a
// leader, which stores what is published to it and answers its
// consumers; the cluster elects them where it may, often on one server,
// and losing that server then stops them all until the others elect new
// ones, 4 to 9 s later. A Spreader moves them apart, group by group, by
// asking a crowded leader to step down in favour of a server that leads
// fewer streams of its group (nats-server's leader stepdown with a
// preferred placement), and moves each replicated consumer of a spread
// stream to its stream's leader, so that a server lost stops one stream
// with its consumers, not parts of several. It checks again every few
// seconds: after an election (a server was lost) or a server's return,
// the leaders are spread again.

// SpreadConfig configures a Spreader.
type SpreadConfig struct {
	// Groups are the streams whose leaders are spread, group by group,
	// the most important first: the leaders of a group's streams go to
	// different servers as far as there are servers (no server leads
	// two more of them than another). A name ending in "*" stands for
	// every stream it prefixes, sorted by name.
	Groups [][]string
	// Every is the pause between two checks once the leaders are
	// spread; default 5s. A check is one listing of the streams, and
	// one of the consumers of each spread stream that has some.
	Every time.Duration
	// Logger receives the moves, once they are done; default
	// slog.Default().
	Logger *slog.Logger
}

// Spreader keeps the leaders of a cluster's streams spread over its
// servers (see SpreadConfig), in the background.
type Spreader struct {
	js   jetstream.JetStream
	cfg  SpreadConfig
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// StartSpreader starts spreading the leaders of cfg's streams: at once,
// then again after a pause that grows from 200ms to SpreadConfig.Every
// until they are spread, then every SpreadConfig.Every. It logs the
// moves once the leaders are spread, and once a minute that they are
// not, with the reason, while they are not.
func StartSpreader(js jetstream.JetStream, cfg SpreadConfig) *Spreader {
	if cfg.Every <= 0 {
		cfg.Every = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Spreader{js: js, cfg: cfg, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// Stop stops the spreader and waits for its check under way.
func (s *Spreader) Stop() {
	if s == nil {
		return
	}
	s.once.Do(func() { close(s.stop) })
	<-s.done
}

// maxLogged bounds the moves one log line lists.
const maxLogged = 32

// run checks until Stop.
func (s *Spreader) run() {
	defer close(s.done)
	pause := 200 * time.Millisecond
	var moves []string
	var since time.Time // when the leaders were first found not spread
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		moved, why := s.Check(ctx)
		cancel()
		if len(moves) < maxLogged {
			moves = append(moves, moved[:min(len(moved), maxLogged-len(moves))]...)
		}
		switch {
		case why == "":
			if len(moves) > 0 {
				s.cfg.Logger.Info("zealgo: nats: stream leaders spread over the servers", "moves", strings.Join(moves, ", "))
			}
			moves, since, pause = nil, time.Time{}, s.cfg.Every
		case since.IsZero():
			since, pause = time.Now(), 200*time.Millisecond
		default:
			if time.Since(since) >= time.Minute {
				s.cfg.Logger.Warn("zealgo: nats: stream leaders not spread yet", "for", time.Since(since).Round(time.Second), "why", why)
				since = time.Now()
			}
			pause = min(2*pause, s.cfg.Every)
		}
		// A little jitter, so that the spreaders of several instances do
		// not check in step.
		wait := pause + rand.N(pause/5+1)
		select {
		case <-s.stop:
			return
		case <-time.After(wait):
		}
	}
}

// Check moves, once, the leaders that are not spread, and returns the
// moves it asked for ("STREAM a→b", "STREAM/CONSUMER a→b") and why the
// leaders are not spread yet ("": they are, and nothing was moved).
func (s *Spreader) Check(ctx context.Context) (moved []string, why string) {
	infos, err := s.streams(ctx)
	if err != nil {
		return nil, err.Error()
	}
	groups := spreadGroups(s.cfg.Groups, infos)
	for _, g := range groups {
		m, w := s.spreadGroup(ctx, g)
		moved = append(moved, m...)
		why = cmp(why, w)
	}
	for _, g := range groups {
		for _, info := range g {
			if slices.ContainsFunc(moved, func(m string) bool { return strings.HasPrefix(m, info.Config.Name+" ") }) {
				why = cmp(why, info.Config.Name+" moved: its consumers follow at the next check")
				continue
			}
			m, w := s.followLeader(ctx, info)
			moved = append(moved, m...)
			why = cmp(why, w)
		}
	}
	if why == "" && len(moved) > 0 {
		why = "moves under way"
	}
	return moved, why
}

// cmp returns a when it is set, else b.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// streams lists the streams with their cluster information, in one
// request (a page of 256).
func (s *Spreader) streams(ctx context.Context) (map[string]*jetstream.StreamInfo, error) {
	out := map[string]*jetstream.StreamInfo{}
	list := s.js.ListStreams(ctx)
	for info := range list.Info() {
		out[info.Config.Name] = info
	}
	if err := list.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return nil, fmt.Errorf("zealgo: nats: list the streams: %w", err)
	}
	return out, nil
}

// spreadGroups resolves the groups' names to the replicated streams
// there are, in order.
func spreadGroups(groups [][]string, infos map[string]*jetstream.StreamInfo) [][]*jetstream.StreamInfo {
	names := make([]string, 0, len(infos))
	for name, info := range infos {
		if info.Cluster != nil && info.Config.Replicas > 1 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	taken := map[string]bool{}
	var out [][]*jetstream.StreamInfo
	for _, g := range groups {
		var got []*jetstream.StreamInfo
		for _, pat := range g {
			for _, name := range names {
				prefix, wild := strings.CutSuffix(pat, "*")
				if !taken[name] && (name == pat || wild && strings.HasPrefix(name, prefix)) {
					taken[name] = true
					got = append(got, infos[name])
				}
			}
		}
		if len(got) > 0 {
			out = append(out, got)
		}
	}
	return out
}

// spreadGroup moves the leaders of one group's streams so that no server
// leads two more of them than another: a stream led by a server that
// leads more goes to a current replica that leads fewer, the least
// loaded first (then by name).
func (s *Spreader) spreadGroup(ctx context.Context, g []*jetstream.StreamInfo) (moved []string, why string) {
	load := map[string]int{}
	for _, info := range g {
		for _, p := range peers(info.Cluster) {
			load[p] += 0
		}
		if l := info.Cluster.Leader; l != "" {
			load[l]++
		}
	}
	for _, info := range g {
		from := info.Cluster.Leader
		if from == "" {
			why = cmp(why, info.Config.Name+" has no leader")
			continue
		}
		to := ""
		for _, r := range info.Cluster.Replicas {
			if r.Offline || !r.Current || load[r.Name]+1 >= load[from] {
				continue
			}
			if to == "" || load[r.Name] < load[to] || load[r.Name] == load[to] && r.Name < to {
				to = r.Name
			}
		}
		if to == "" {
			for _, p := range peers(info.Cluster) {
				if load[p]+1 < load[from] {
					why = cmp(why, fmt.Sprintf("%s: %s leads %d streams of its group, %s %d, and is not current yet", info.Config.Name, from, load[from], p, load[p]))
				}
			}
			continue
		}
		if err := stepDown(ctx, s.js, "STREAM.LEADER.STEPDOWN."+info.Config.Name, to); err != nil {
			why = cmp(why, err.Error())
			continue
		}
		load[from]--
		load[to]++
		moved = append(moved, info.Config.Name+" "+from+"→"+to)
	}
	return moved, why
}

// peers are the servers of a stream or consumer that are not offline:
// its leader and replicas.
func peers(c *jetstream.ClusterInfo) []string {
	var out []string
	if c.Leader != "" {
		out = append(out, c.Leader)
	}
	for _, r := range c.Replicas {
		if !r.Offline {
			out = append(out, r.Name)
		}
	}
	return out
}

// followLeader moves the leader of each replicated consumer of the
// stream to the stream's leader, when it is a current replica of the
// consumer.
func (s *Spreader) followLeader(ctx context.Context, info *jetstream.StreamInfo) (moved []string, why string) {
	leader := info.Cluster.Leader
	if info.State.Consumers == 0 || leader == "" {
		return nil, ""
	}
	list, err := s.consumers(ctx, info.Config.Name)
	if err != nil {
		return nil, err.Error()
	}
	for _, ci := range list {
		if ci.Cluster == nil || len(ci.Cluster.Replicas) == 0 || ci.Cluster.Leader == leader {
			continue
		}
		name := info.Config.Name + "/" + ci.Name
		i := slices.IndexFunc(ci.Cluster.Replicas, func(r *jetstream.PeerInfo) bool { return r.Name == leader })
		switch {
		case i < 0:
			continue // not one of its servers: it cannot follow
		case ci.Cluster.Leader == "":
			why = cmp(why, name+" has no leader")
			continue
		case ci.Cluster.Replicas[i].Offline || !ci.Cluster.Replicas[i].Current:
			why = cmp(why, name+": "+leader+" is not current yet")
			continue
		}
		if err := stepDown(ctx, s.js, "CONSUMER.LEADER.STEPDOWN."+info.Config.Name+"."+ci.Name, leader); err != nil {
			why = cmp(why, err.Error())
			continue
		}
		moved = append(moved, name+" "+ci.Cluster.Leader+"→"+leader)
	}
	return moved, why
}

// consumers lists the consumers of stream, with their cluster
// information, in one request (a page of 256).
func (s *Spreader) consumers(ctx context.Context, stream string) ([]*jetstream.ConsumerInfo, error) {
	var resp struct {
		Consumers []*jetstream.ConsumerInfo `json:"consumers"`
		Error     *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := apiRequest(ctx, s.js, "CONSUMER.LIST."+stream, []byte(`{"offset":0}`), &resp); err != nil {
		return nil, fmt.Errorf("zealgo: nats: list the consumers of %s: %w", stream, err)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("zealgo: nats: list the consumers of %s: %s", stream, resp.Error.Description)
	}
	return resp.Consumers, nil
}

// stepDown asks the leader of a stream or consumer (api: its stepdown
// API subject after $JS.API.) to hand over to the server named to.
func stepDown(ctx context.Context, js jetstream.JetStream, api, to string) error {
	body, _ := json.Marshal(map[string]any{"placement": map[string]string{"preferred": to}})
	var resp struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := apiRequest(ctx, js, api, body, &resp); err != nil {
		return fmt.Errorf("zealgo: nats: %s to %s: %w", api, to, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("zealgo: nats: %s to %s: %s", api, to, resp.Error.Description)
	}
	return nil
}

// apiRequest sends a request to the JetStream API and decodes the answer
// into resp.
func apiRequest(ctx context.Context, js jetstream.JetStream, api string, body []byte, resp any) error {
	prefix := js.Options().APIPrefix
	if prefix == "" {
		prefix = jetstream.DefaultAPIPrefix
	}
	m, err := js.Conn().RequestWithContext(ctx, prefix+api, body)
	if err != nil {
		return err
	}
	return json.Unmarshal(m.Data, resp)
}
