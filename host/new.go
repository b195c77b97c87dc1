package host

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/zealgo/zealgo/internal/scaffold"
)

func init() {
	commands["new"] = command{"write a new application into DIR: zealgo new DIR [--module PATH]", (*App).cmdNew}
}

// cmdNew writes a new application (internal/scaffold) into a missing or
// empty directory, then runs `go mod tidy` there when Go is installed.
func (a *App) cmdNew(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zealgo new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	modPath := fs.String("module", "", "the application's module `PATH` (default example.com/<the name of DIR>)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zealgo new DIR [--module PATH]")
		fs.PrintDefaults()
	}
	err := flagsFromEnv(fs) // flags_env.go: ZEALGO_MODULE
	if err != nil {
		return 2
	}
	dir, err := parseNew(fs, args)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, err)
			fs.Usage()
		}
		return 2
	}
	if *modPath == "" {
		*modPath, err = scaffold.DefaultModule(dir)
	}
	var d scaffold.Data
	if err == nil {
		d, err = scaffold.NewData(*modPath)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	fw, err := scaffold.Running()
	if err == nil {
		d.Zealgo = fw
		_, err = scaffold.Write(dir, d)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "zealgo: wrote %s into %s (zealgo %s", d.Module, dir, fw.Version)
	if fw.Local() {
		fmt.Fprintf(stdout, " from the checkout %s", fw.ReplacePath)
	}
	fmt.Fprintln(stdout, ")")
	return tidyNew(dir, stdout, stderr)
}

// parseNew parses zealgo new's arguments, which take the flags before or
// after DIR, and returns DIR.
func parseNew(fs *flag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", errors.New("zealgo: new: name the directory to write the application into")
	}
	dir := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("zealgo: new: one directory only, not also %q", fs.Arg(0))
	}
	return dir, nil
}

// tidyNew runs go mod tidy in the new application, and prints what to do
// next.
func tidyNew(dir string, stdout, stderr io.Writer) int {
	err := scaffold.Tidy(dir, stderr)
	switch {
	case errors.Is(err, scaffold.ErrNoGo):
		fmt.Fprintf(stdout, "no go command found: install Go %s or newer and run `go mod tidy` in %s before go test or an editor\n",
			scaffold.GoVersion, dir)
	case err != nil:
		fmt.Fprintf(stderr, "%v\nthe application is written; run `go mod tidy` in %s once the problem above is solved\n", err, dir)
		return 1
	}
	fmt.Fprintf(stdout, "next:\n  cd %s\n  zealgo serve    # then open http://127.0.0.1:8080/\n  go test ./...\n", dir)
	return 0
}
