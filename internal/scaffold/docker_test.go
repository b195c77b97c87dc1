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
// two stages; the first builds the zealgo command as a static binary,
// checks the application's files with it, then compiles them with
// `zealgo build --embed`, in that order; the final stage holds that
// binary alone (no source copied in), runs as a non-root user, keeps the
// data in a volume and serves, configured by variables, on every
// interface.
func TestDockerfileShape(t *testing.T) {
	b, err := Dockerfile(Data{Name: "app", GoVersion: "1.26", Main: "./cmd/app"})
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	stages := strings.Split(df, "\nFROM ")
	if len(stages) != 3 {
		t.Fatalf("want two stages, got %d:\n%s", len(stages)-1, df)
	}
	build, final := stages[1], stages[2]
	steps := []string{
		"golang:1.26 AS build\n",
		"CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags=\"-s -w\" -o /out/zealgo ./cmd/app\n",
		"RUN /out/zealgo check --root /src\n",
		"/out/zealgo build --root /src --embed -o /out/app && mkdir -p /out/data\n",
	}
	at := 0
	for _, want := range steps {
		i := strings.Index(build[at:], want)
		if i < 0 {
			t.Errorf("the build stage lacks %q after %q", want, build[:at])
			continue
		}
		at += i + len(want)
	}
	for _, want := range []string{
		"gcr.io/distroless/static-debian12:nonroot\n",
		"COPY --from=build /out/app /usr/local/bin/app\n",
		"USER nonroot\n",
		"ZEALGO_ADDR=:8080",
		"VOLUME [\"/data\"]\n",
		"ENTRYPOINT [\"/usr/local/bin/app\"]\nCMD [\"serve\"]\n",
	} {
		if !strings.Contains(final, want) {
			t.Errorf("the final stage lacks %q", want)
		}
	}
	for _, line := range strings.Split(final, "\n") {
		if strings.HasPrefix(line, "COPY ") && (!strings.Contains(line, "--from=build ") || !strings.Contains(line, " /out/")) {
			t.Errorf("the final stage copies more than the binary and its data directory: %q", line)
		}
	}
	if strings.Contains(final, "/out/zealgo") {
		t.Error("the final stage ships the zealgo command, not the built binary")
	}
	if _, err := Dockerfile(Data{Name: "app", GoVersion: "1.26"}); err == nil {
		t.Error("no main package: no error")
	}
}
