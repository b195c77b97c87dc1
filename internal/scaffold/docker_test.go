package scaffold

import (
	"os"
	"strings"
	"testing"
)

// repository is the data the repository's own Dockerfile is rendered
// with: the sample application, built from its main package.
var repository = Data{Name: "sample", GoVersion: GoVersion, Main: "./sample"}

// TestRepositoryDockerfile: the repository's Dockerfile and .dockerignore
// are the ones zealgo new writes, rendered for the sample application:
// what a new application gets is what sample/container_test.go replays.
func TestRepositoryDockerfile(t *testing.T) {
	want, err := Dockerfile(repository)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("Dockerfile differs from files/Dockerfile.tmpl rendered for ./sample; want:\n%s", want)
	}
	ignore, err := os.ReadFile("../../.dockerignore")
	wantIgnore, err2 := DockerIgnore()
	if err != nil || err2 != nil || string(ignore) != string(wantIgnore) {
		t.Errorf(".dockerignore differs from files/.dockerignore (%v, %v)", err, err2)
	}
}

// TestDockerfileShape checks what the container must be, line by line:
// two stages, a static binary checked against the application's files, a
// non-root user, the application copied, the data in a volume, the server
// configured by variables and listening on every interface.
func TestDockerfileShape(t *testing.T) {
	b, err := Dockerfile(Data{Name: "app", GoVersion: "1.26", Main: "./cmd/app"})
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{
		"FROM golang:1.26 AS build\n",
		"CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags=\"-s -w\" -o /out/app ./cmd/app",
		"RUN /out/app check --root /src\n",
		"FROM gcr.io/distroless/static-debian12:nonroot\n",
		"COPY . /app\n",
		"USER nonroot\n",
		"ZEALGO_ADDR=:8080",
		"VOLUME [\"/data\"]\n",
		"ENTRYPOINT [\"/usr/local/bin/app\"]\nCMD [\"serve\"]\n",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if strings.Count(df, "\nFROM ") != 2 {
		t.Error("want two stages")
	}
	if _, err := Dockerfile(Data{Name: "app", GoVersion: "1.26"}); err == nil {
		t.Error("no main package: no error")
	}
}
