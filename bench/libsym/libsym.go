// Package libsym holds the Yaegi symbol table of benchlib, so that
// benchmark handler files can import it.
package libsym

import "reflect"

// Symbols is the table to give to App.Symbols.
var Symbols = map[string]map[string]reflect.Value{}

//go:generate go run github.com/zealgo/zealgo/internal/tools/symgen -name libsym github.com/zealgo/zealgo/bench/benchlib
