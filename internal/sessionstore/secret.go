package sessionstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// loadSecret reads the secret kept in path, or generates it there with
// mode 0600; of several processes starting at once, one writes it.
func loadSecret(path string, log *slog.Logger) (string, error) {
	for range 3 {
		s, err := readSecret(path, log)
		if err == nil && s != "" {
			return s, nil
		}
		if err == nil {
			// A file being written by another process: try again.
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("zealgo: session secret: %w", err)
		}
		s, err = writeSecret(path)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("zealgo: session secret: %w", err)
		}
		log.Info("zealgo: generated the session secret", "file", path)
		return s, nil
	}
	return "", fmt.Errorf("zealgo: session secret %s is empty or too short", path)
}

// readSecret returns the secret in path, or "" when the file is too short
// to hold one; it warns when others may read the file.
func readSecret(path string, log *slog.Logger) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if len(s) < 32 {
		return "", nil
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("zealgo: the session secret file is readable by others; chmod 600 it", "file", path)
	}
	return s, nil
}

// writeSecret generates a secret into path, which must not exist.
func writeSecret(path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	s := hex.EncodeToString(raw[:])
	_, err = f.WriteString(s + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return s, nil
}
