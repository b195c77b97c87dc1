package buildgen

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Progress: the go command builds with -v, which names each package as
// it compiles it (not those it finds in its build cache); the lines that
// name a file's package count that file compiled, the other package
// names are dropped, and everything else (errors) passes on to Stderr.

// progressWriter turns `go build -v` output into progress lines.
type progressWriter struct {
	out      io.Writer // the go command's other output
	progress io.Writer // "zealgo build: compiled n/total files (rel)"
	terminal bool      // progress overwrites one line
	byPath   map[string]string
	total    int
	done     int
	buf      []byte
}

// newProgress returns the writer of the go command's stderr, or nil when
// opts want no progress.
func (g *generator) newProgress() *progressWriter {
	if g.opts.Progress == nil {
		return nil
	}
	p := &progressWriter{out: g.opts.Stderr, progress: g.opts.Progress, terminal: g.opts.ProgressTerminal, byPath: map[string]string{}}
	for _, f := range g.files {
		if f.registered {
			p.byPath[g.importPath(f)] = f.rel
			p.total++
		}
	}
	fmt.Fprintf(p.progress, "zealgo build: compiling %d file(s)\n", p.total)
	return p
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.line(string(p.buf[:i]))
		p.buf = p.buf[i+1:]
	}
}

// line handles one line of the go command's output.
func (p *progressWriter) line(s string) {
	if rel, ok := p.byPath[s]; ok {
		p.done++
		if p.terminal {
			fmt.Fprintf(p.progress, "\rzealgo build: compiled %d/%d files (%s)\x1b[K", p.done, p.total, rel)
		} else {
			fmt.Fprintf(p.progress, "zealgo build: compiled %d/%d files (%s)\n", p.done, p.total, rel)
		}
		return
	}
	if s != "" && !strings.ContainsAny(s, " :#\t") { // another package's name
		return
	}
	fmt.Fprintln(p.out, s)
}

// finish ends the progress: the files not compiled came from the cache.
func (p *progressWriter) finish() {
	if len(p.buf) > 0 {
		p.line(string(p.buf))
		p.buf = nil
	}
	if p.terminal && p.done > 0 {
		fmt.Fprintln(p.progress)
	}
	fmt.Fprintf(p.progress, "zealgo build: %d/%d files compiled, %d from the build cache\n", p.total, p.total, p.total-p.done)
}
