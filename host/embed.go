package host

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// Embedded assets: a binary made by `zealgo build --embed` carries the
// application's templates, static files and migrations (template/,
// public/ but its pages, migrations/). At start-up they are written once
// under the data directory (<data>/assets/<hash>, named by their
// content), which then serves as the root for them: the static handler
// still sends files from disk, and --root is only the default place of
// the data directory.
var embedded struct {
	sync.Mutex
	fsys fs.FS
	hash string
}

// EmbedAssets gives the host the application's embedded templates,
// static files and migrations, whose content hash is hash. `zealgo build
// --embed` generates its call; applications do not call it.
func EmbedAssets(fsys fs.FS, hash string) {
	embedded.Lock()
	defer embedded.Unlock()
	embedded.fsys, embedded.hash = fsys, hash
}

// useEmbedded writes the embedded assets under the data directory, if
// the binary has any, and makes that directory the root of templates,
// static files and migrations.
func (d *appDirs) useEmbedded(dataDir string, log *slog.Logger) error {
	embedded.Lock()
	fsys, hash := embedded.fsys, embedded.hash
	embedded.Unlock()
	if fsys == nil {
		return nil
	}
	dir := filepath.Join(dataDir, "assets", hash)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return fmt.Errorf("zealgo: embedded assets: %w", err)
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dir), "new-")
		if err != nil {
			return fmt.Errorf("zealgo: embedded assets: %w", err)
		}
		if err := os.CopyFS(filepath.Join(tmp, "x"), fsys); err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("zealgo: embedded assets: %w", err)
		}
		err = os.Rename(filepath.Join(tmp, "x"), dir)
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); err != nil && serr != nil { // another process may have won
			return fmt.Errorf("zealgo: embedded assets: %w", err)
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("zealgo: embedded assets: %w", err)
	}
	// The handler, page and task files are compiled in: api/ and task/
	// are never read, and public/ holds only the static files.
	d.root, d.api, d.public = real, filepath.Join(real, "api"), filepath.Join(real, "public")
	d.task, d.template = filepath.Join(real, "task"), filepath.Join(real, "template")
	log.Info("zealgo: templates, static files and migrations embedded in the binary", "dir", real)
	return nil
}
