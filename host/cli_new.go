package host

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/zealgo/zealgo/internal/scaffold"
)

// newCmd is zealgo new DIR: a new application (internal/scaffold) in a
// missing or empty directory, then `go mod tidy` there when Go is
// installed.
func (c *cli) newCmd() *cobra.Command {
	var modPath string
	cmd := c.command("new DIR [--module PATH]", "write a new application into DIR", func(_ *cobra.Command, args []string) int {
		return c.writeNew(args[0], modPath)
	})
	cmd.Long = "Write a new application into DIR, which must be missing or empty, with a go.mod requiring this zealgo\n" +
		"(replaced by the source checkout it was built from, or $ZEALGO_SOURCE), then run go mod tidy there\n" +
		"when go is on the PATH."
	cmd.Args = newArgs
	cmd.DisableFlagsInUseLine = true // its Use names them
	cmd.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	cmd.Flags().StringVar(&modPath, "module", "", "the application's module `PATH` (default example.com/<the name of DIR>)")
	return cmd
}

// newArgs wants one argument, the directory.
func newArgs(_ *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return errors.New("zealgo: new: name the directory to write the application into")
	case len(args) > 1:
		return fmt.Errorf("zealgo: new: one directory only, not also %q", args[1])
	}
	return nil
}

// writeNew writes the application of module modPath (default: made from
// dir's name) into dir.
func (c *cli) writeNew(dir, modPath string) int {
	stdout, stderr := c.stdout, c.stderr
	var err error
	if modPath == "" {
		modPath, err = scaffold.DefaultModule(dir)
	}
	var d scaffold.Data
	if err == nil {
		d, err = scaffold.NewData(modPath)
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
