// Command symgen writes the Yaegi symbol tables of the packages its
// arguments name into the current directory, as `yaegi extract` does,
// with the same flags (but -license), and the same files, byte for byte;
// it loads the packages' types from the go command's build cache instead
// of type-checking them from source (internal/symgen). go:generate runs
// it:
//
//	//go:generate go run github.com/zealgo/zealgo/internal/tools/symgen -name symbols example.com/pkg
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/zealgo/zealgo/internal/symgen"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run parses the flags, generates the tables and writes them.
func run(args []string) error {
	fs := flag.NewFlagSet("symgen", flag.ContinueOnError)
	name := fs.String("name", "", "the package name of the generated files (default: the current directory's package name)")
	include := fs.String("include", "", "comma separated list of regexp matching symbols to include")
	exclude := fs.String("exclude", "", "comma separated list of regexp matching symbols to exclude")
	tag := fs.String("tag", "", "comma separated list of build tags to be added to the created package")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("zealgo: symgen: %w", err)
	}
	opts := symgen.Options{Name: *name, Tags: split(*tag)}
	var err error
	if opts.Include, err = regexps(*include); err != nil {
		return err
	}
	if opts.Exclude, err = regexps(*exclude); err != nil {
		return err
	}
	if opts.Name == "" {
		return fmt.Errorf("zealgo: symgen: -name is required")
	}
	tables, err := symgen.Load(context.Background(), "", nil, opts, fs.Args()...)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if t.Err != nil {
			return t.Err
		}
		if err := os.WriteFile(symgen.FileName(t.Path), t.Src, 0o644); err != nil {
			return fmt.Errorf("zealgo: symgen: %w", err)
		}
	}
	return nil
}

// split splits a comma separated list, "" being none.
func split(list string) []string {
	if list == "" {
		return nil
	}
	return strings.Split(list, ",")
}

// regexps compiles a comma separated list of regular expressions.
func regexps(list string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, s := range split(list) {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("zealgo: symgen: %w", err)
		}
		out = append(out, re)
	}
	return out, nil
}
