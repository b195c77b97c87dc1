// Package other lives in a directory of another name.
package other

import (
	crand "crypto/rand"
	"io"
	"math/rand"
)

// Rand uses math/rand.
type Rand interface {
	Src() rand.Source
	R() io.Reader
}

// Reader is crypto/rand's reader.
var Reader = crand.Reader

// V is a value.
const V = 1
