package logbuf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
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

// sameRecord formats one record with Direct and with the logger's own
// slog handler and fails unless the bytes are equal.
func sameRecord(t *testing.T, format, msg string, strs []string, n int64, d time.Duration) {
	t.Helper()
	at := time.Date(2026, 11, 23, 17, 33, 8, 123456789, time.UTC)
	var viaSlog, direct bytes.Buffer
	slogLogs, err := logbuf.New(&viaSlog, format, slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	rec := slog.NewRecord(at, slog.LevelInfo, msg, 0)
	for i, s := range strs {
		rec.AddAttrs(slog.String(strs[(i+1)%len(strs)]+"k", s))
	}
	rec.AddAttrs(slog.Int64("n", n), slog.Duration("d", d))
	if err := slogLogs.Bulk.Handler().Handle(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	slogLogs.Close()

	directLogs, _ := logbuf.New(&direct, format, slog.LevelInfo)
	dl := logbuf.DirectOf(directLogs.Bulk.Handler())
	r := dl.Begin(at, slog.LevelInfo, msg)
	for i, s := range strs {
		r.String(strs[(i+1)%len(strs)]+"k", s)
	}
	r.Int("n", n)
	r.Duration("d", d)
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	directLogs.Close()
	if viaSlog.String() != direct.String() {
		t.Fatalf("%s record differs:\nslog   %q\ndirect %q", format, viaSlog.String(), direct.String())
	}
}

// TestDirectAsSlog: a record made with Direct is byte for byte the one
// slog's handler makes of the same attributes, in JSON and in text, with
// hostile strings as values, keys and message, and any integer and
// duration; each JSON line decodes with encoding/json to the values given.
func TestDirectAsSlog(t *testing.T) {
	durations := []time.Duration{0, 1, 999, 1000, 1001, 1500, 999999, 1e6, 1234567, 1e9, 1e9 + 1, 59e9, 60e9,
		61500e6, 3600e9, 3601e9, 90061e9 + 5, -1, -1500, math.MaxInt64, math.MinInt64}
	for i := 0; i < 2000; i++ {
		durations = append(durations, time.Duration(rand.Int64N(1<<uint(rand.IntN(62)+1))-rand.Int64N(1<<20)))
	}
	for _, format := range []string{"json", "text"} {
		for i, s := range hostileStrings {
			sameRecord(t, format, s, []string{s, hostileStrings[(i+3)%len(hostileStrings)], "plain"}, int64(i)-5, durations[i])
		}
		for i, d := range durations {
			sameRecord(t, format, "request", []string{"GET"}, int64(i)*math.MaxInt64/2000, d)
		}
		sameRecord(t, format, "request", []string{"GET"}, math.MinInt64, 0)
	}

	var out bytes.Buffer
	logs, _ := logbuf.New(&out, "json", slog.LevelInfo)
	dl := logbuf.DirectOf(logs.Bulk.Handler())
	for _, s := range hostileStrings {
		r := dl.Begin(time.Now(), slog.LevelInfo, "request")
		r.String("path", s)
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
	r.Int("n", 1)
	r.End()
	if s, _ := out.text(); s != "" {
		t.Fatalf("a Direct record was written at once: %q", s)
	}
	logs.Close()
	if s, _ := out.text(); s != "level=WARN msg=\"no time\" n=1\n" {
		t.Fatalf("after Close: %q", s)
	}
}
