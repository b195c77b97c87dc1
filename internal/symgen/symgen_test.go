package symgen_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/traefik/yaegi/extract"

	"github.com/zealgo/zealgo/internal/symgen"
)

// testdata is the import path of the test packages' directory.
const testdata = "github.com/zealgo/zealgo/internal/symgen/testdata/"

// TestSameAsYaegiExtract: for packages with names of every kind
// (constants of each kind, typed and untyped, variables, functions,
// generic names, aliases, interfaces embedding others, with variadic,
// unnamed, blank and named parameters and results, String methods,
// constraints, a package named unlike its directory or like a standard
// one), the table is yaegi extract's, byte for byte, with and without
// -include, -exclude and -tag.
func TestSameAsYaegiExtract(t *testing.T) {
	if testing.Short() {
		t.Skip("yaegi extract type-checks the test packages' imports from source")
	}
	names := []string{"kinds", "ifaces", "named", "edge", "generic", "list", "cons"}
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = testdata + n
	}
	cases := []struct {
		name  string
		paths []string
		ours  symgen.Options
		ref   extract.Extractor
	}{
		{"plain", paths, symgen.Options{Name: "out"}, extract.Extractor{Dest: "out"}},
		{"filtered", paths[:2], symgen.Options{Name: "flt", Tags: []string{"foo", "bar"},
			Include: []*regexp.Regexp{regexp.MustCompile("K"), regexp.MustCompile("T"), regexp.MustCompile("Reader")},
			Exclude: []*regexp.Regexp{regexp.MustCompile("^T"), regexp.MustCompile("Both")}},
			extract.Extractor{Dest: "flt", Tag: []string{"foo", "bar"}, Include: []string{"K", "T", "Reader"}, Exclude: []string{"^T", "Both"}}},
	}
	for _, c := range cases {
		tables, err := symgen.Load(context.Background(), "", nil, c.ours, c.paths...)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			if tb.Err != nil {
				t.Fatalf("%s: %s: %v", c.name, tb.Path, tb.Err)
			}
			var want bytes.Buffer
			if _, err := c.ref.Extract(tb.Path, "", &want); err != nil {
				t.Fatalf("%s: yaegi extract %s: %v", c.name, tb.Path, err)
			}
			if string(tb.Src) != want.String() {
				t.Errorf("%s: %s differs from yaegi extract's:\n%s", c.name, tb.Path, diff(want.String(), string(tb.Src)))
			}
		}
	}
}

// TestCheckedInTables: the tables checked in, which `yaegi extract`
// wrote, are what the generator writes (the check CI makes after go
// generate).
func TestCheckedInTables(t *testing.T) {
	root := filepath.Join("..", "..")
	sets := []struct {
		dir, name string
		exclude   []*regexp.Regexp
		paths     []string
	}{
		{"symbols", "symbols", []*regexp.Regexp{regexp.MustCompile("ParseRSAPrivateKeyFromPEMWithPassword")},
			[]string{"github.com/zealgo/zealgo/host", "github.com/golang-jwt/jwt/v5", "golang.org/x/crypto/bcrypt"}},
		{"sample/storesym", "storesym", nil, []string{"github.com/zealgo/zealgo/sample/store"}},
		{"bench/libsym", "libsym", nil, []string{"github.com/zealgo/zealgo/bench/benchlib"}},
	}
	for _, s := range sets {
		tables, err := symgen.Load(context.Background(), root, nil, symgen.Options{Name: s.name, Exclude: s.exclude}, s.paths...)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			if tb.Err != nil {
				t.Fatal(tb.Err)
			}
			file := filepath.Join(root, s.dir, symgen.FileName(tb.Path))
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(tb.Src, want) {
				t.Errorf("%s differs from the generated table:\n%s", file, diff(string(want), string(tb.Src)))
			}
		}
	}
}

// TestLoadErrors: a package that does not exist has an error of its
// own; the others still have their tables.
func TestLoadErrors(t *testing.T) {
	tables, err := symgen.Load(context.Background(), "", nil, symgen.Options{Name: "out"}, testdata+"missing", testdata+"named")
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 || tables[0].Err == nil || !strings.HasPrefix(tables[0].Err.Error(), "zealgo: symgen: ") {
		t.Fatalf("a missing package: got %+v", tables)
	}
	if tables[1].Err != nil || !bytes.Contains(tables[1].Src, []byte(`Symbols["`+testdata+`named/other"]`)) {
		t.Fatalf("the package next to a missing one: %v\n%s", tables[1].Err, tables[1].Src)
	}
}

// diff returns the first line where got and want differ, with both.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\nwant: " + wl + "\ngot:  " + gl
		}
	}
	return "(no line differs)"
}
