// Package scaffold holds the files zealgo writes for an application. For
// now that is its container recipe: the repository's own Dockerfile is
// rendered from DockerfileTemplate (a test keeps the two the same), and
// `zealgo new` is to write the same for each new application.
package scaffold

import (
	"bytes"
	"fmt"
	"text/template"
)

// DockerfileData fills DockerfileTemplate.
type DockerfileData struct {
	// GoVersion is the tag of the golang image of the build stage: the
	// major and minor version of the go directive in go.mod, e.g. "1.26".
	GoVersion string
	// Main is the package of the application's main, as go build takes
	// it: "." or "./cmd/app".
	Main string
}

// DockerfileTemplate is the Dockerfile of a zealgo application, a
// text/template filled with DockerfileData. The build stage compiles a
// static binary (CGO_ENABLED=0) and checks every handler, page and task
// file with it; the final stage is distroless, runs as a non-root user,
// holds the application's files read-only under /app (handler files and
// the module's own packages are interpreted from there at run time) and
// keeps its data in the volume /data. Every setting is a ZEALGO_<FLAG>
// variable.
const DockerfileTemplate = `# syntax=docker/dockerfile:1
# The container of a zealgo application: one static binary and the
# application's files, on a distroless image, as a non-root user.
#
#   docker build -t app .
#   docker run --rm -p 8080:8080 -v app-data:/data app
#
# Every serve flag is also a variable: docker run -e ZEALGO_TASK_WORKERS=2
# -e ZEALGO_METRICS_ADDR=:9090 ... (see: docker run --rm app serve -h).
# Kubernetes probes: GET /healthz (liveness) and GET /readyz (readiness);
# set ZEALGO_DRAIN_DELAY=5s so that a pod stops getting traffic before it
# stops accepting it.

FROM golang:{{.GoVersion}} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/app {{.Main}} && mkdir -p /out/data
# Stop here if a handler, page or task file does not compile.
RUN /out/app check --root /src

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/app /usr/local/bin/app
# The handler, page, task and template files, the migrations and the
# module's packages they import: owned by root, read-only to the server.
# Mount a directory here instead (-v "$PWD":/app:ro) to serve files as
# they are edited.
COPY . /app
COPY --from=build --chown=65532:65532 /out/data /data
WORKDIR /app
ENV ZEALGO_ROOT=/app \
    ZEALGO_DATA=/data \
    ZEALGO_ADDR=:8080 \
    ZEALGO_LOG_FORMAT=json \
    ZEALGO_ACCESS_LOG=true
USER 65532:65532
EXPOSE 8080
VOLUME ["/data"]
ENTRYPOINT ["/usr/local/bin/app"]
CMD ["serve"]
`

// DockerIgnore is the .dockerignore that goes with the Dockerfile: the
// build context leaves out version control, local data and databases.
const DockerIgnore = `.git
.dockerignore
Dockerfile
data
**/*.db
**/*.db-shm
**/*.db-wal
`

// Dockerfile renders DockerfileTemplate with d.
func Dockerfile(d DockerfileData) (string, error) {
	if d.GoVersion == "" || d.Main == "" {
		return "", fmt.Errorf("zealgo: dockerfile: want a Go version and a main package, got %+v", d)
	}
	var b bytes.Buffer
	if err := template.Must(template.New("Dockerfile").Parse(DockerfileTemplate)).Execute(&b, d); err != nil {
		return "", fmt.Errorf("zealgo: dockerfile: %w", err)
	}
	return b.String(), nil
}
