package routepat

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		elem, name string
		rest, ok   bool
		pattern    string
	}{
		{"[slug]", "slug", false, true, "{slug}"},
		{"[...path]", "path", true, true, "{path...}"},
		{"[_id2]", "_id2", false, true, "{_id2}"},
		{"[zoë]", "zoë", false, true, "{zoë}"},
		{"feed", "", false, false, "feed"},
		{"[]", "", false, false, "[]"},
		{"[...]", "", false, false, "[...]"},
		{"[2x]", "", false, false, "[2x]"},
		{"[a-b]", "", false, false, "[a-b]"},
		{"[type]", "", false, false, "[type]"}, // a keyword names no variable
		{"[..x]", "", false, false, "[..x]"},
		{"[slug", "", false, false, "[slug"},
		{"x[slug]", "", false, false, "x[slug]"},
	} {
		name, rest, ok := Parse(tc.elem)
		if name != tc.name || rest != tc.rest || ok != tc.ok {
			t.Errorf("Parse(%q) = %q, %v, %v; want %q, %v, %v", tc.elem, name, rest, ok, tc.name, tc.rest, tc.ok)
		}
		if p := Pattern(tc.elem); p != tc.pattern {
			t.Errorf("Pattern(%q) = %q, want %q", tc.elem, p, tc.pattern)
		}
	}
	if v := VarName("[...path]"); v != "path" {
		t.Errorf("VarName([...path]) = %q", v)
	}
	if v := VarName("feed"); v != "feed" {
		t.Errorf("VarName(feed) = %q", v)
	}
}
