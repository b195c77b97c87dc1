package main

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
)

// TestSampleConcurrentRegistrations: 50 clients register one username at
// once. Exactly one account row exists afterwards; one client gets the
// 303, the 49 others 409, and none a 500.
func TestSampleConcurrentRegistrations(t *testing.T) {
	srv := newSampleServer(t)
	const n = 50
	var (
		wg       sync.WaitGroup
		start    = make(chan struct{})
		statuses = make([]int, n)
		bodies   = make([]string, n)
	)
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = srv.client(t)
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := clients[i].form("/api/learn/register", url.Values{"username": {"popular"}, "password": {"password1"}})
			statuses[i], bodies[i] = r.Status, r.Body
		}()
	}
	close(start)
	wg.Wait()

	count := map[int]int{}
	for i, s := range statuses {
		count[s]++
		if s != http.StatusSeeOther && s != http.StatusConflict {
			t.Errorf("client %d: %d %s", i, s, bodies[i])
		}
	}
	if count[http.StatusSeeOther] != 1 || count[http.StatusConflict] != n-1 {
		t.Errorf("statuses %v, want one 303 and %d x 409", count, n-1)
	}
	var rows int64
	if err := srv.Store.DB().Raw("SELECT count(*) FROM users WHERE username = ?", "popular").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("%d account rows for one username, want 1", rows)
	}
	// The winner is logged in; the losers are not.
	logged := 0
	for _, c := range clients {
		if c.json("GET", "/api/learn/notes", nil).Status == http.StatusOK {
			logged++
		}
	}
	if logged != 1 {
		t.Errorf("%d clients logged in, want 1", logged)
	}
	t.Logf("statuses: %v", count)
}
