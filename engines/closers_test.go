package engines

import (
	"errors"
	"testing"
)

type countCloser struct {
	n   int
	err error
}

func (c *countCloser) Close() error { c.n++; return c.err }

// CloseAll closes each tracked closer once and joins their errors; a later CloseAll does
// nothing; a closer tracked after it is closed at once and refused.
func TestClosers(t *testing.T) {
	var cs Closers
	a, b := &countCloser{}, &countCloser{err: errors.New("b failed")}
	for _, c := range []*countCloser{a, b} {
		if err := cs.Track(c); err != nil {
			t.Fatal(err)
		}
	}
	first, err := cs.CloseAll()
	if !first || err == nil || err.Error() != "b failed" || a.n != 1 || b.n != 1 {
		t.Fatalf("first close: %v %v, closed %d %d", first, err, a.n, b.n)
	}
	if first, err := cs.CloseAll(); first || err != nil || a.n != 1 {
		t.Fatalf("second close: %v %v, a closed %d times", first, err, a.n)
	}
	late := &countCloser{}
	if err := cs.Track(late); !errors.Is(err, ErrClosed) || late.n != 1 {
		t.Fatalf("tracked after close: %v, closed %d times", err, late.n)
	}
}
