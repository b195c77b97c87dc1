package host

// valueBatch hands out header value slices of one value, cut from a
// batch of slots that are never written again, so that a header keeps its
// values however long it is kept (a recorder, a wrapper that reads it
// after the request), for an allocation per 64 values. The zero value is
// ready; a nil *valueBatch allocates each slice.
type valueBatch struct{ free []string }

// one returns []string{v}.
func (b *valueBatch) one(v string) []string {
	if b == nil {
		return []string{v}
	}
	if len(b.free) == 0 {
		b.free = make([]string, 64)
	}
	s := b.free[:1:1]
	b.free = b.free[1:]
	s[0] = v
	return s
}
