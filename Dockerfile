# syntax=docker/dockerfile:1
#
# The image of sample: the build stage builds the zealgo command from
# ./sample, checks every handler, page and task file with it, then
# compiles them with `zealgo build --embed` into one static binary (no
# cgo, no interpreter) holding the templates, static files and migrations
# too. The final stage holds that binary only and serves as a non-root
# user, with its data (the SQLite database, sessions) in the volume /data.
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
    CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags="-s -w" -o /out/zealgo ./sample
# Stop here if a handler, page or task file does not compile.
RUN /out/zealgo check --root /src
# Every handler, page and task file compiled, the templates, static files
# and migrations embedded: production runs compiled.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    /out/zealgo build --root /src --embed -o /out/app && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/app /usr/local/bin/app
COPY --from=build --chown=nonroot:nonroot /out/data /data
# An empty root: the binary serves what it compiled and embedded, and
# needs no source file.
WORKDIR /app
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
