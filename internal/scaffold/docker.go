package scaffold

import (
	"errors"
	"fmt"
)

// Dockerfile renders the Dockerfile of files/ with d: the container of a
// zealgo application. The build stage compiles d.Main as a static binary
// (CGO_ENABLED=0) and checks every handler, page and task file with it;
// the final stage is distroless, runs as a non-root user, holds the
// application's files read-only under /app and keeps its data in the
// volume /data. Every setting is a ZEALGO_<FLAG> variable.
func Dockerfile(d Data) ([]byte, error) {
	if d.GoVersion == "" || d.Main == "" || d.Name == "" {
		return nil, errors.New("zealgo: dockerfile: want a name, a Go version and a main package")
	}
	_, b, err := render("files/Dockerfile.tmpl", d)
	return b, err
}

// DockerIgnore returns the .dockerignore that goes with the Dockerfile:
// the build context leaves out version control, local data and databases.
func DockerIgnore() ([]byte, error) {
	b, err := files.ReadFile("files/.dockerignore")
	if err != nil {
		return nil, fmt.Errorf("zealgo: dockerignore: %w", err)
	}
	return b, nil
}
