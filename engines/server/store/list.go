package store

// List is a double-ended queue of elements in a ring buffer: O(1) push and pop at both ends,
// O(1) index. Elements are owned by the list (callers pass copies).
type List struct {
	buf  [][]byte
	head int
	n    int
}

// Len is the number of elements.
func (l *List) Len() int { return l.n }

func (l *List) grow() {
	nb := make([][]byte, max(8, 2*len(l.buf)))
	for i := 0; i < l.n; i++ {
		nb[i] = l.buf[(l.head+i)%len(l.buf)]
	}
	l.buf, l.head = nb, 0
}

func (l *List) shrink() {
	if len(l.buf) > 64 && l.n < len(l.buf)/4 {
		nb := make([][]byte, len(l.buf)/2)
		for i := 0; i < l.n; i++ {
			nb[i] = l.buf[(l.head+i)%len(l.buf)]
		}
		l.buf, l.head = nb, 0
	}
}

// PushLeft inserts v at the head.
func (l *List) PushLeft(v []byte) {
	if l.n == len(l.buf) {
		l.grow()
	}
	l.head = (l.head - 1 + len(l.buf)) % len(l.buf)
	l.buf[l.head] = v
	l.n++
}

// PushRight inserts v at the tail.
func (l *List) PushRight(v []byte) {
	if l.n == len(l.buf) {
		l.grow()
	}
	l.buf[(l.head+l.n)%len(l.buf)] = v
	l.n++
}

// PopLeft removes and returns the head; nil when empty.
func (l *List) PopLeft() []byte {
	if l.n == 0 {
		return nil
	}
	v := l.buf[l.head]
	l.buf[l.head] = nil
	l.head = (l.head + 1) % len(l.buf)
	l.n--
	l.shrink()
	return v
}

// PopRight removes and returns the tail; nil when empty.
func (l *List) PopRight() []byte {
	if l.n == 0 {
		return nil
	}
	i := (l.head + l.n - 1) % len(l.buf)
	v := l.buf[i]
	l.buf[i] = nil
	l.n--
	l.shrink()
	return v
}

// Index returns element i (0-based from the head; negative from the tail) and whether it exists.
func (l *List) Index(i int) ([]byte, bool) {
	if i < 0 {
		i += l.n
	}
	if i < 0 || i >= l.n {
		return nil, false
	}
	return l.buf[(l.head+i)%len(l.buf)], true
}

// SetIndex replaces element i (already normalised, in range).
func (l *List) SetIndex(i int, v []byte) { l.buf[(l.head+i)%len(l.buf)] = v }

// Range returns elements start..stop inclusive, with Redis's index normalisation.
func (l *List) Range(start, stop int) [][]byte {
	start, stop, ok := normRange(start, stop, l.n)
	if !ok {
		return [][]byte{}
	}
	out := make([][]byte, 0, stop-start+1)
	for i := start; i <= stop; i++ {
		out = append(out, l.buf[(l.head+i)%len(l.buf)])
	}
	return out
}

// normRange applies LRANGE/LTRIM index rules: negatives count from the end, clamps.
func normRange(start, stop, n int) (int, int, bool) {
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= n {
		return 0, 0, false
	}
	if stop >= n {
		stop = n - 1
	}
	return start, stop, true
}

// Elements returns all elements in order (a fresh slice).
func (l *List) Elements() [][]byte { return l.Range(0, -1) }

// Replace sets the contents to els (used by LTRIM, LREM, LINSERT).
func (l *List) Replace(els [][]byte) {
	l.buf = make([][]byte, max(8, len(els)))
	copy(l.buf, els)
	l.head, l.n = 0, len(els)
}

// Trim keeps elements start..stop (LTRIM's rules).
func (l *List) Trim(start, stop int) {
	s, e, ok := normRange(start, stop, l.n)
	if !ok {
		l.Replace(nil)
		return
	}
	l.Replace(l.Range(s, e))
}
