//go:build ignore

// fmt misses methods of the file's types outside an interface value: built, this prints
// "denied: bob denied: bob [L1 L2] {L3 4} false".
package main

import (
	"fmt"

	"github.com/zealgo/zealgo/host"
)

type denied struct{ who string }

func (d *denied) Error() string { return "denied: " + d.who }

type level int

func (l level) String() string { return fmt.Sprint("L", int(l)) }

type row struct {
	Level level
	N     int
}

var fmt_methods = func(api *host.API) any {
	d := &denied{"bob"}
	var err error = d // an error value: alike in both modes
	wrapper := fmt.Sprintf("%d", level(3)) != "3"
	return fmt.Sprint(d, " ", err, " ", []level{1, 2}, " ", row{3, 4}, " ", wrapper)
}
