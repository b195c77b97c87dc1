package host

import (
	"fmt"
	"path/filepath"

	"github.com/zealgo/zealgo/interp"
)

// prepare resolves the application's directories; it does not start anything.
func (a *App) prepare() error {
	if a.dirs.root != "" {
		return nil
	}
	a.log = a.Logger()
	root, err := filepath.Abs(a.cfg.Root)
	if err != nil {
		return fmt.Errorf("zealgo: root: %w", err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("zealgo: root %s: %w", a.cfg.Root, err)
	}
	a.dirs = appDirs{root: real, api: filepath.Join(real, "api"), public: filepath.Join(real, "public"),
		task: filepath.Join(real, "task"), template: filepath.Join(real, "template")}
	if a.cfg.DataDir == "" {
		a.cfg.DataDir = filepath.Join(real, "data")
	}
	if a.dirs.module, err = interp.FindModule(real); err != nil {
		return fmt.Errorf("zealgo: root %s: %w", a.cfg.Root, err)
	}
	return a.useEmbedded() // zealgo build --embed (embed.go)
}
