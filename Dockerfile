# syntax=docker/dockerfile:1
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

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/app ./sample && mkdir -p /out/data
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
