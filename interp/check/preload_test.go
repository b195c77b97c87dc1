package check

import (
	"go/types"
	"reflect"
	"strings"
	"testing"
)

// TestPreload: Preload builds the linked packages it is given, as the
// first file that imports each would, skips those the binary does not
// link, and a file checked afterwards uses the packages it built.
func TestPreload(t *testing.T) {
	table := Exports{"example.com/greet/greet": {"Hello": reflect.ValueOf(strings.ToUpper)}}
	c := New(table)
	if c.u.built["strings"] || c.u.built["example.com/greet"] {
		t.Fatal("a new Checker holds built packages")
	}
	if n := c.Preload("strings", "example.com/greet", "example.com/app/lib", "strings"); n != 3 {
		t.Errorf("Preload = %d, want 3 (strings twice, greet; not the unlinked lib)", n)
	}
	if !c.u.built["strings"] || !c.u.built["example.com/greet"] || c.u.built["example.com/app/lib"] {
		t.Fatalf("built after Preload: %v", c.u.built)
	}
	greet := c.u.pkgs["example.com/greet"]
	src := "//go:build ignore\n\npackage main\n\nimport \"example.com/greet\"\n\nvar f = func() string { return greet.Hello(\"a\") }\n"
	r := c.File("f.go", []byte(src))
	if len(r.Diagnostics) != 0 || !r.Typed {
		t.Fatalf("after Preload: typed %v, %v", r.Typed, r.Diagnostics)
	}
	found := false
	for _, obj := range r.Info.Uses {
		if pn, ok := obj.(*types.PkgName); ok && pn.Name() == "greet" {
			found = true
			if pn.Imported() != greet {
				t.Errorf("the file imports another example.com/greet than the one Preload built")
			}
		}
	}
	if !found {
		t.Error("the file's use of greet is not in its types")
	}
}
