package host

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zealgo/zealgo/internal/vet"
	"github.com/zealgo/zealgo/interp/check"
)

// vetCmd is zealgo vet: the analyzers of go vet over the handler, page and
// task files, which go vet ./... skips (internal/vet).
func (c *cli) vetCmd() *cobra.Command {
	var asJSON bool
	cmd := c.command("vet", "run go vet's analyzers over every handler, page and task file; exit 1 on findings",
		func(*cobra.Command, []string) int { return c.vet(asJSON) })
	cmd.Long = "Type-check every handler, page and task file under api/, public/ and task/ as a package of its own\n" +
		"(its imports resolved by the application's go.mod) and run the analyzers go vet runs over it\n" +
		"(printf, copylocks, unreachable, ...). go vet ./... skips these files: they carry //go:build ignore.\n" +
		"Each finding prints as file:line:col: message (analyzer). Exit 1 on findings, 2 when the files\n" +
		"cannot be read or the go command fails."
	c.rootFlag(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as one JSON object, as check --json does")
	return cmd
}

func (c *cli) vet(asJSON bool) int {
	a := c.a
	if err := a.prepare(); err != nil {
		fmt.Fprintln(c.stderr, err)
		return 2
	}
	var paths []string
	for _, dir := range []string{a.dirs.api, a.dirs.public, a.dirs.task} {
		files, err := goFiles(dir)
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			return 2
		}
		paths = append(paths, files...)
	}
	found, err := vet.Files(a.dirs.root, paths)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 2
	}
	for i := range found {
		found[i].File = a.dirs.rel(found[i].File)
	}
	if asJSON {
		writeCheckJSON(c.stdout, found, len(paths), false)
	} else {
		for _, d := range found {
			fmt.Fprintf(c.stdout, "%s (%s)\n", d, d.Rule)
		}
	}
	return vetSummary(c, found, len(paths))
}

// vetSummary prints the last line of vet and returns its exit status.
func vetSummary(c *cli, found []check.Diagnostic, files int) int {
	if len(found) == 0 {
		fmt.Fprintf(c.stderr, "zealgo vet: %d file(s) ok\n", files)
		return 0
	}
	fmt.Fprintf(c.stderr, "zealgo vet: %d finding(s) in %d file(s)\n", len(found), files)
	return 1
}
