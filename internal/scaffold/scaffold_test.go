package scaffold_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/internal/scaffold"
)

// goVersion returns the major.minor of the go directive of go.mod.
func goVersion(t *testing.T, gomod string) string {
	t.Helper()
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no go directive", gomod)
	}
	return string(m[1])
}

// TestRepositoryDockerfile: the repository's Dockerfile and .dockerignore
// are the template rendered for the sample application with the Go
// version of go.mod: what zealgo new will write is what is tried here.
func TestRepositoryDockerfile(t *testing.T) {
	want, err := scaffold.Dockerfile(scaffold.DockerfileData{GoVersion: goVersion(t, "../../go.mod"), Main: "./sample"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("Dockerfile differs from scaffold.DockerfileTemplate rendered for ./sample; want:\n%s", want)
	}
	ignore, err := os.ReadFile("../../.dockerignore")
	if err != nil || string(ignore) != scaffold.DockerIgnore {
		t.Errorf(".dockerignore differs from scaffold.DockerIgnore (%v)", err)
	}
}

// TestDockerfileShape checks what the container must be, line by line:
// two stages, a static binary, a non-root user, the application copied,
// the data in a volume, the server listening on every interface.
func TestDockerfileShape(t *testing.T) {
	df, err := scaffold.Dockerfile(scaffold.DockerfileData{GoVersion: "1.26", Main: "./cmd/app"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"FROM golang:1.26 AS build\n",
		"CGO_ENABLED=0 go build -trimpath -ldflags=\"-s -w\" -o /out/app ./cmd/app",
		"RUN /out/app check --root /src\n",
		"FROM gcr.io/distroless/static-debian12:nonroot\n",
		"COPY . /app\n",
		"USER 65532:65532\n",
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
	if _, err := scaffold.Dockerfile(scaffold.DockerfileData{GoVersion: "1.26"}); err == nil {
		t.Error("no main package: no error")
	}
}
