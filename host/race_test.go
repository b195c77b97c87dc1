package host_test

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// TestRaceConcurrentClients serves one handler to 200 clients at once.
// Run it under -race (the README's test command does): the interpreted
// closure, the cache and the dispatcher are shared by every request.
func TestRaceConcurrentClients(t *testing.T) {
	ta := newTestApp(t, map[string]string{"api/echo/id.go": `package main

import "github.com/zealgo/zealgo/host"

var id = func(api *host.API) any {
	return map[string]any{"id": api.Input["id"], "method": api.Method()}
}
`})
	tr := &http.Transport{MaxIdleConnsPerHost: 200}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	const clients, each = 200, 5
	errs := make(chan error, clients*each)
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				want := fmt.Sprintf(`{"id":"%d-%d","method":"GET"}`, c, i)
				resp, err := client.Get(fmt.Sprintf("%s/api/echo/id?id=%d-%d", ta.srv.URL, c, i))
				if err != nil {
					errs <- err
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(b) != want {
					errs <- fmt.Errorf("client %d: %d %s, want %s", c, resp.StatusCode, b, want)
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n < 5 {
			t.Error(err)
		}
		n++
	}
	if n > 0 {
		t.Fatalf("%d of %d requests failed", n, clients*each)
	}
}
