package scaffold

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
)

// ErrNoGo is Tidy's error when no go command is on the PATH.
var ErrNoGo = errors.New("zealgo: new: no go command on the PATH")

// Tidy runs `go mod tidy` in dir, which completes go.mod and writes go.sum
// (the go command fetches what its module cache lacks), with its output
// going to stderr.
func Tidy(dir string, stderr io.Writer) error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return ErrNoGo
	}
	cmd := exec.Command(gobin, "mod", "tidy")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("zealgo: new: go mod tidy: %w", err)
	}
	return nil
}
