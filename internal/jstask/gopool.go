package jstask

import "time"

// goPool runs funcs on goroutines that outlive them: a goroutine that
// has run a task keeps its grown stack for the next one, instead of a
// new goroutine growing (copying) its stack again for each task, which
// cost a worker about a seventh of its time. An idle goroutine ends
// after goIdle.
type goPool struct {
	work chan func()
}

// goIdle is how long an idle goroutine of a goPool waits for work.
const goIdle = 10 * time.Second

func newGoPool() *goPool { return &goPool{work: make(chan func())} }

// run runs f on an idle goroutine of p, or on a new one.
func (p *goPool) run(f func()) {
	select {
	case p.work <- f:
	default:
		go p.loop(f)
	}
}

// loop runs f, then what p hands it, until it idles for goIdle.
func (p *goPool) loop(f func()) {
	idle := time.NewTimer(goIdle)
	defer idle.Stop()
	for {
		f()
		f = nil
		idle.Reset(goIdle)
		select {
		case f = <-p.work:
		case <-idle.C:
			return
		}
	}
}
