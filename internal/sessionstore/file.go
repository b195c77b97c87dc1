package sessionstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FileBackend keeps each session in a file of its directory named by its
// id, mode 0600: an 8-byte expiry time (Unix nanoseconds, big-endian) then
// the data. Expired files are removed when read and by a sweep at most
// hourly. Several processes may share the directory.
type FileBackend struct {
	dir string

	mu        sync.Mutex
	lastSweep time.Time
}

// NewFileBackend returns a FileBackend keeping sessions in dir, which is
// made on the first save.
func NewFileBackend(dir string) *FileBackend { return &FileBackend{dir: dir} }

func (b *FileBackend) path(id string) (string, error) {
	if !validID(id) {
		return "", ErrNotFound
	}
	return filepath.Join(b.dir, id), nil
}

// Load implements Backend.
func (b *FileBackend) Load(_ context.Context, id string) ([]byte, error) {
	p, err := b.path(id)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if len(data) < 8 || time.Now().UnixNano() > int64(binary.BigEndian.Uint64(data)) {
		_ = os.Remove(p)
		return nil, ErrNotFound
	}
	return data[8:], nil
}

// Save implements Backend: written to a temporary file, then renamed over
// the old one.
func (b *FileBackend) Save(_ context.Context, id string, data []byte, ttl time.Duration) error {
	p, err := b.path(id)
	if err != nil {
		return fmt.Errorf("zealgo: bad session id")
	}
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(b.dir, ".tmp-*")
	if err != nil {
		return err
	}
	var head [8]byte
	binary.BigEndian.PutUint64(head[:], uint64(time.Now().Add(ttl).UnixNano()))
	_, err = f.Write(append(head[:], data...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	b.maybeSweep()
	return nil
}

// Delete implements Backend.
func (b *FileBackend) Delete(_ context.Context, id string) error {
	p, err := b.path(id)
	if err != nil {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// maybeSweep removes expired session files in the background, at most
// once an hour.
func (b *FileBackend) maybeSweep() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(b.lastSweep) < time.Hour {
		return
	}
	b.lastSweep = time.Now()
	go b.sweep()
}

// sweep removes the expired session files of the directory.
func (b *FileBackend) sweep() {
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return
	}
	now := time.Now().UnixNano()
	for _, e := range entries {
		if !validID(e.Name()) {
			continue
		}
		p := filepath.Join(b.dir, e.Name())
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		var head [8]byte
		_, err = io.ReadFull(f, head[:])
		_ = f.Close()
		if err != nil || now > int64(binary.BigEndian.Uint64(head[:])) {
			_ = os.Remove(p)
		}
	}
}
