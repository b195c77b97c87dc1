# syntax=docker/dockerfile:1
#
# The image of sample: a static binary (no cgo) built from ./sample,
# which checks every handler, page and task file at build time and serves
# this directory read-only as a non-root user, with its data (the SQLite
# database, sessions) in the volume /data.
#
#   docker build -t sample .
#   docker run --rm -p 8080:8080 -v sample-data:/data sample
#
# Every serve flag is also a variable: docker run -e ZEALGO_TASK_WORKERS=2
# -e ZEALGO_METRICS_ADDR=:9090 ... (see: docker run --rm sample serve -h).
# Kubernetes probes: GET /healthz (liveness) and GET /readyz (readiness);
# set ZEALGO_DRAIN_DELAY=5s so that a pod stops getting traffic before it
# stops accepting it.

FROM golang:1.26.8 AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod go mod download
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags="-s -w" -o /out/app ./sample && mkdir -p /out/data
# Stop here if a handler, page or task file does not compile.
RUN /out/app check --root /src

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/app /usr/local/bin/app
COPY --from=build --chown=nonroot:nonroot /out/data /data
# The handler, page, task and template files, the migrations and the
# packages they import: owned by root, read-only to the server. Mount a
# directory here instead (-v "$PWD":/app:ro) to serve files as they are
# edited.
WORKDIR /app
COPY . /app
ENV ZEALGO_ROOT=/app \
    ZEALGO_DATA=/data \
    ZEALGO_ADDR=:8080 \
    ZEALGO_LOG_FORMAT=json \
    ZEALGO_ACCESS_LOG=true
USER nonroot
EXPOSE 8080
VOLUME ["/data"]
ENTRYPOINT ["/usr/local/bin/app"]
CMD ["serve"]
