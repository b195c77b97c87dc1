package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// TestSampleCheck runs the sample's check command over the repository:
// every handler, page and task file compiles against the symbols the
// sample links, and every endpoint and page of the application is routed.
func TestSampleCheck(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"check", "--root", ".."}, []string{"file(s) ok"}},
		{[]string{"routes", "--root", ".."}, []string{
			"/api/learn/register", "/api/learn/login", "/api/learn/logout", "/api/learn/notes",
			"/learn/", "/learn/notes",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			app := host.New()
			setup(app)
			var out, errOut bytes.Buffer
			if code := app.Run(context.Background(), tt.args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d:\n%s%s", code, out.String(), errOut.String())
			}
			all := out.String() + errOut.String()
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
			if strings.Contains(all, "api/learn") && strings.Contains(all, " - ") {
				t.Errorf("a sample file does not load:\n%s", all)
			}
		})
	}
}
