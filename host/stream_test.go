package host_test

import (
	"bufio"
	"net/http"
	"testing"
	"time"
)

// TestStreamFlushesEachChunk: the client reads the first chunk while the
// handler is still blocked before producing the second, for both stream
// forms of the return contract.
func TestStreamFlushesEachChunk(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"seq", `return func(yield func(string) bool) {
		if !yield("first\n") {
			return
		}
		<-gate
		yield("second\n")
	}`},
		{"chan", `c := make(chan string)
	go func() {
		defer close(c)
		c <- "first\n"
		<-gate
		c <- "second\n"
	}()
	return (<-chan string)(c)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := make(chan struct{})
			ta := newTestAppProvide(t, map[string]string{"api/stream.go": `package main

import "github.com/zealgo/zealgo/host"

var stream = func(api *host.API, gate chan struct{}) any {
	` + tc.body + `
}
`}, gate)
			resp, err := http.Get(ta.srv.URL + "/api/stream")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			rd := bufio.NewReader(resp.Body)
			got := make(chan string, 1)
			go func() { line, _ := rd.ReadString('\n'); got <- line }()
			select {
			case line := <-got:
				if line != "first\n" {
					t.Fatalf("first chunk %q", line)
				}
			case <-time.After(10 * time.Second):
				close(gate)
				t.Fatal("the first chunk did not arrive before the handler produced the second")
			}
			close(gate)
			if line, _ := rd.ReadString('\n'); line != "second\n" {
				t.Fatalf("second chunk %q", line)
			}
		})
	}
}
