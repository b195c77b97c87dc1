// Package storetest checks that a sessionstore.Backend keeps the
// contract the session engine relies on. Every backend runs it:
//
//	func TestFileBackend(t *testing.T) {
//		storetest.Run(t, sessionstore.NewFileBackend(t.TempDir()))
//	}
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/sessionstore"
	"github.com/zealgo/zealgo/internal/testutil"
)

// Run checks b: unknown ids, a save read back and overwritten, delete,
// expiry after the ttl given to Save, and concurrent use. Ids are made by
// sessionstore.NewID.
func Run(t *testing.T, b sessionstore.Backend) {
	t.Run("Unknown", func(t *testing.T) { unknown(t, b) })
	t.Run("SaveLoadDelete", func(t *testing.T) { saveLoadDelete(t, b) })
	t.Run("Expiry", func(t *testing.T) { expiry(t, b) })
	t.Run("Concurrent", func(t *testing.T) { concurrent(t, b) })
}

func unknown(t *testing.T, b sessionstore.Backend) {
	ctx := context.Background()
	if _, err := b.Load(ctx, sessionstore.NewID()); !errors.Is(err, sessionstore.ErrNotFound) {
		t.Errorf("Load of an unknown id: %v, want ErrNotFound", err)
	}
	if err := b.Delete(ctx, sessionstore.NewID()); err != nil {
		t.Errorf("Delete of an unknown id: %v", err)
	}
}

func saveLoadDelete(t *testing.T, b sessionstore.Backend) {
	ctx := context.Background()
	id := sessionstore.NewID()
	mustLoad := func(want []byte) {
		t.Helper()
		got, err := b.Load(ctx, id)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Load = %q, %v; want %q", got, err, want)
		}
	}
	if err := b.Save(ctx, id, []byte("first\x00binary\xff"), time.Hour); err != nil {
		t.Fatal(err)
	}
	mustLoad([]byte("first\x00binary\xff"))
	if err := b.Save(ctx, id, []byte("second"), time.Hour); err != nil {
		t.Fatal(err)
	}
	mustLoad([]byte("second"))
	other := sessionstore.NewID()
	if err := b.Save(ctx, other, []byte("other"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Load(ctx, id); !errors.Is(err, sessionstore.ErrNotFound) {
		t.Errorf("Load after Delete: %v, want ErrNotFound", err)
	}
	if got, err := b.Load(ctx, other); err != nil || string(got) != "other" {
		t.Errorf("Delete of one id touched another: %q, %v", got, err)
	}
}

// expiry: a session saved with a short ttl is gone once the ttl has
// passed, while one saved with a long ttl stays.
func expiry(t *testing.T, b sessionstore.Backend) {
	ctx := context.Background()
	short, long := sessionstore.NewID(), sessionstore.NewID()
	if err := b.Save(ctx, short, []byte("short"), 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(ctx, long, []byte("long"), time.Hour); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "a session past its ttl to expire", func() bool {
		_, err := b.Load(ctx, short)
		return errors.Is(err, sessionstore.ErrNotFound)
	})
	if got, err := b.Load(ctx, long); err != nil || string(got) != "long" {
		t.Errorf("a session within its ttl: %q, %v", got, err)
	}
}

// concurrent: 8 goroutines each save, read back and delete sessions of
// their own.
func concurrent(t *testing.T, b sessionstore.Backend) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				id, want := sessionstore.NewID(), fmt.Sprintf("g%d-%d", g, i)
				if err := b.Save(ctx, id, []byte(want), time.Hour); err != nil {
					errs <- err
					return
				}
				if got, err := b.Load(ctx, id); err != nil || string(got) != want {
					errs <- fmt.Errorf("load %s: %q, %v", want, got, err)
					return
				}
				if err := b.Delete(ctx, id); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
