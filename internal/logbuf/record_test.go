package logbuf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/logbuf"
)

// hostileStrings are values a client can put in a logged field (a path,
// a request id), and a few more: quotes, backslashes, control characters,
// invalid UTF-8, separators, '=' and spaces, non-printable and wide runes.
var hostileStrings = []string{
	"", "/api/php/get", `/a"b`, `/a\b`, "/a\nb\r\tc", "/\x00\x01\x1f\x7f", "/a b=c", "/é/日本/🙂",
	"/\xff\xfe", "/ok\xc3", "/\u2028\u2029", "/\u00a0nbsp", "/\u200bzero-width", `"`, `\`, "=", " ",
	"</script><b>&amp;</b>", "/%22%00", strings.Repeat("/long", 300),
}

// testRecord is a record's content.
type testRecord struct {
	at    time.Time
	level slog.Level
	msg   string
	strs  []string // values; the next one's value plus "k" is each one's key
	n     int64
	d     time.Duration
}

// sameRecords formats records with one Direct and with the logger's own
// slog handler and fails unless the bytes are equal, record by record.
func sameRecords(t *testing.T, format string, recs []testRecord) {
	t.Helper()
	var viaSlog, direct bytes.Buffer
	slogLogs, err := logbuf.New(&viaSlog, format, slog.LevelDebug)
	if err != nil {
		t.Fatal(err)
	}
	directLogs, _ := logbuf.New(&direct, format, slog.LevelDebug)
	dl := logbuf.DirectOf(directLogs.Bulk.Handler())
	for _, tr := range recs {
		rec := slog.NewRecord(tr.at, tr.level, tr.msg, 0)
		r := dl.Begin(tr.at, tr.level, tr.msg)
		for i, s := range tr.strs {
			key := tr.strs[(i+1)%len(tr.strs)] + "k"
			rec.AddAttrs(slog.String(key, s))
			r.String(logbuf.NewKey(key), s)
		}
		rec.AddAttrs(slog.Int64("n", tr.n), slog.Duration("d", tr.d))
		r.Int(logbuf.NewKey("n"), tr.n)
		r.Duration(logbuf.NewKey("d"), tr.d)
		if err := slogLogs.Bulk.Handler().Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		if err := r.End(); err != nil {
			t.Fatal(err)
		}
	}
	slogLogs.Close()
	directLogs.Close()
	want, got := strings.SplitAfter(viaSlog.String(), "\n"), strings.SplitAfter(direct.String(), "\n")
	if len(want) != len(got) {
		t.Fatalf("%s: %d lines, want %d", format, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s record %d differs:\nslog   %q\ndirect %q", format, i, want[i], got[i])
		}
	}
}

// testTimes are record times: whole seconds, trailing zeros, zones of
// either sign, the local zone, back and forth across seconds; and the
// zero time, which leaves the time out.
func testTimes() []time.Time {
	base := time.Date(2026, 11, 23, 17, 33, 8, 123456789, time.UTC)
	times := []time.Time{base, base.Truncate(time.Second), base.Truncate(time.Millisecond), base.Add(100),
		base.Add(-123456789 + 1000), base.Add(876543211), base.Add(-1), base, {},
		base.In(time.FixedZone("", 5*3600+30*60)), base.In(time.FixedZone("", -7*3600)), base.Local(),
		time.Now(), time.Now().UTC(), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)}
	for i := 0; i < 200; i++ {
		times = append(times, base.Add(time.Duration(rand.Int64N(int64(3*time.Second)))))
	}
	return times
}

// TestDirectAsSlog: a record made with Direct is byte for byte the one
// slog's handler makes of the same attributes, in JSON and in text, with
// hostile strings as values, keys and message, any integer and duration,
// any time and level; each JSON line decodes with encoding/json to the
// values given.
func TestDirectAsSlog(t *testing.T) {
	durations := []time.Duration{0, 1, 999, 1000, 1001, 1500, 999999, 1e6, 1234567, 1e9, 1e9 + 1, 59e9, 60e9,
		61500e6, 3600e9, 3601e9, 90061e9 + 5, -1, -1500, math.MaxInt64, math.MinInt64}
	for i := 0; i < 2000; i++ {
		durations = append(durations, time.Duration(rand.Int64N(1<<uint(rand.IntN(62)+1))-rand.Int64N(1<<20)))
	}
	times := testTimes()
	levels := []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelDebug, slog.LevelError, slog.LevelInfo + 2}
	var recs []testRecord
	for i, s := range hostileStrings {
		recs = append(recs, testRecord{times[i%len(times)], levels[i%len(levels)], s,
			[]string{s, hostileStrings[(i+3)%len(hostileStrings)], "plain"}, int64(i) - 5, durations[i]})
	}
	for i, d := range durations {
		recs = append(recs, testRecord{times[i%len(times)], slog.LevelInfo, "request", []string{"GET"}, int64(i) * math.MaxInt64 / 2000, d})
	}
	for _, at := range times {
		recs = append(recs, testRecord{at, slog.LevelInfo, "request", []string{"GET"}, math.MinInt64, 0})
	}
	for _, format := range []string{"json", "text"} {
		sameRecords(t, format, recs)
	}

	var out bytes.Buffer
	logs, _ := logbuf.New(&out, "json", slog.LevelInfo)
	dl := logbuf.DirectOf(logs.Bulk.Handler())
	for _, s := range hostileStrings {
		r := dl.Begin(time.Now(), slog.LevelInfo, "request")
		r.String(logbuf.NewKey("path"), s)
		r.End()
	}
	logs.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(hostileStrings) {
		t.Fatalf("%d lines for %d records:\n%s", len(lines), len(hostileStrings), out.String())
	}
	for i, line := range lines {
		var rec struct{ Path, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d is no JSON object: %q: %v", i, line, err)
		}
		if want := string([]rune(hostileStrings[i])); rec.Path != want { // each invalid byte: U+FFFD
			t.Errorf("line %d: path %q, want %q", i, rec.Path, want)
		}
	}
}

// TestDirectOf: only a Bulk logger's own handler has a Direct; it follows
// the logger's level; its records go through the buffer like the others.
func TestDirectOf(t *testing.T) {
	out := &sink{}
	logs, _ := logbuf.New(out, "text", slog.LevelWarn)
	for _, h := range []slog.Handler{logs.Main.Handler(), logs.Bulk.With("k", "v").Handler(),
		logs.Bulk.WithGroup("g").Handler(), slog.NewJSONHandler(out, nil)} {
		if logbuf.DirectOf(h) != nil {
			t.Errorf("%T has a Direct", h)
		}
	}
	d := logbuf.DirectOf(logs.Bulk.Handler())
	if d == nil {
		t.Fatal("the Bulk logger's handler has no Direct")
	}
	if d.Enabled(slog.LevelInfo) || !d.Enabled(slog.LevelWarn) {
		t.Error("Direct.Enabled does not follow the level")
	}
	r := d.Begin(time.Time{}, slog.LevelWarn, "no time")
	r.Int(logbuf.NewKey("n"), 1)
	r.End()
	if s, _ := out.text(); s != "" {
		t.Fatalf("a Direct record was written at once: %q", s)
	}
	logs.Close()
	if s, _ := out.text(); s != "level=WARN msg=\"no time\" n=1\n" {
		t.Fatalf("after Close: %q", s)
	}
}

// BenchmarkRecord formats an access record, through slog's handler and
// through Direct, into a Writer on io.Discard.
//
//	go test ./internal/logbuf -run '^$' -bench BenchmarkRecord -benchmem
func BenchmarkRecord(b *testing.B) {
	for _, format := range []string{"json", "text"} {
		logs, _ := logbuf.New(io.Discard, format, slog.LevelInfo)
		defer logs.Close()
		at, d := time.Now(), 1234567*time.Nanosecond
		b.Run(format+"/slog", func(b *testing.B) {
			b.ReportAllocs()
			h := logs.Bulk.Handler()
			for i := 0; i < b.N; i++ {
				rec := slog.NewRecord(at, slog.LevelInfo, "request", 0)
				rec.AddAttrs(slog.String("method", "GET"), slog.String("path", "/api/php/get"), slog.Int("status", 200),
					slog.Int64("bytes", 27), slog.Duration("duration", d), slog.String("request_id", "1a2b3c4d5e6f7a8b"),
					slog.String("remote", "127.0.0.1:54321"), slog.String("file", "api/php/get.go"))
				h.Handle(context.Background(), rec)
			}
		})
		b.Run(format+"/direct", func(b *testing.B) {
			b.ReportAllocs()
			dl := logbuf.DirectOf(logs.Bulk.Handler())
			for i := 0; i < b.N; i++ {
				r := dl.Begin(at, slog.LevelInfo, "request")
				r.String(keyMethod, "GET")
				r.String(keyPath, "/api/php/get")
				r.Int(keyStatus, 200)
				r.Int(keyBytes, 27)
				r.Duration(keyDuration, d)
				r.String(keyRequestID, "1a2b3c4d5e6f7a8b")
				r.String(keyRemote, "127.0.0.1:54321")
				r.String(keyFile, "api/php/get.go")
				r.End()
			}
		})
	}
}

var (
	keyMethod, keyPath, keyStatus, keyBytes = logbuf.NewKey("method"), logbuf.NewKey("path"), logbuf.NewKey("status"), logbuf.NewKey("bytes")
	keyDuration, keyRequestID, keyRemote    = logbuf.NewKey("duration"), logbuf.NewKey("request_id"), logbuf.NewKey("remote")
	keyFile                                 = logbuf.NewKey("file")
)

// TestDirectConcurrent: records made at once by many goroutines, over
// several seconds of record time, reach the writer whole, each a JSON
// object with its own values, none lost.
func TestDirectConcurrent(t *testing.T) {
	out := &sink{}
	logs, _ := logbuf.New(out, "json", slog.LevelInfo)
	dl := logbuf.DirectOf(logs.Bulk.Handler())
	const goroutines, each = 8, 500
	base := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r := dl.Begin(base.Add(time.Duration(i)*7*time.Millisecond), slog.LevelInfo, "request")
				r.Int(keyStatus, int64(g*each+i))
				r.String(keyPath, strings.Repeat("/p", i%50))
				r.End()
			}
		}()
	}
	wg.Wait()
	logs.Close()
	s, _ := out.text()
	seen := map[int64]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		var rec struct {
			Time   time.Time
			Status int64
			Path   string
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a record: %q: %v", line, err)
		}
		i := rec.Status % each
		if seen[rec.Status] || rec.Path != strings.Repeat("/p", int(i%50)) || !rec.Time.Equal(base.Add(time.Duration(i)*7*time.Millisecond)) {
			t.Fatalf("record %q: repeated or wrong", line)
		}
		seen[rec.Status] = true
	}
	if len(seen) != goroutines*each {
		t.Fatalf("%d records, want %d", len(seen), goroutines*each)
	}
}
