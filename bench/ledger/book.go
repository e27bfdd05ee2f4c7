package ledger

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Book is one segment's share of a run's ledger, when the run's load comes from several
// processes (qbench run --segment i/N): what the producers this segment ran sent, and which
// acknowledgements they got; what this segment's consumers received, of any producer; and what
// its final sweep found still held. Union joins the books of all segments into one ledger, so a
// message produced in one segment and consumed in another is matched by its identity (producer,
// sequence number), and loss and duplicates are computed over the union, never added up.
//
// Each message's marks are kept one per sequence number and compressed (deflate, base64): a
// run's marks are long runs of the same value, so a million messages take a few kilobytes.
type Book struct {
	Groups    int `json:"groups"`
	Producers int `json:"producers"`
	// Sent holds the marks of the producers this segment ran, one entry each.
	Sent []Marks `json:"sent"`
	// Received holds, per group and producer, how many times each message reached this
	// segment's consumers (uvarints).
	Received []Marks `json:"received,omitempty"`
	// Found holds, per group and producer, the messages the final sweep found held (a bitmap).
	Found []Marks `json:"found,omitempty"`
	// Reordered is each producer's reordered count as this segment judged it: only deliveries
	// of its own producers to its own consumers (order across machines has no common clock).
	Reordered []int64 `json:"reordered,omitempty"`
	Unknown   int64   `json:"unknown,omitempty"`
	// PoisonEvery is the scenario's poison_every (SetPoison), for the union's totals.
	PoisonEvery uint64 `json:"poison_every,omitempty"`
	// Intended holds, per producer this segment ran, each message's intended time (zigzag
	// varint deltas), and Failed each failed send's sequence number and answer time, when the
	// run had fault windows (BookTimes): the merge charges the union's costs to them.
	Intended []Marks `json:"intended,omitempty"`
	Failed   []Marks `json:"failed,omitempty"`
	// ShiftNs puts this book's times (ns since its segment's epoch) on the run's shared
	// timeline: ns since the shared start instant, on the engine's clock.
	ShiftNs int64 `json:"shift_ns,omitempty"`
}

// Marks are one producer's marks for one group (Group is 0 in Sent).
type Marks struct {
	Group    int    `json:"group,omitempty"`
	Producer int    `json:"producer"`
	Data     string `json:"data"`
}

// The flags a book carries; the batch marks are only for the live reorder rule.
const bookFlags = flagSent | flagAcked | flagFailed

// SetRemote says another segment runs producer: this ledger sees only its deliveries.
func (l *Ledger) SetRemote(producer int) {
	b := l.producers[producer]
	b.mu.Lock()
	b.remote = true
	b.mu.Unlock()
}

// Received is the number of first deliveries so far, summed over groups: a segment's drain
// watches it for progress.
func (l *Ledger) Received() int64 {
	var n int64
	for g := range l.firstDelivered {
		n += l.firstDelivered[g].Load()
	}
	return n
}

// Book returns this ledger's marks as a segment's share: local says which producers this
// segment ran. Call it after the run, like Close.
func (l *Ledger) Book(local func(producer int) bool) (Book, error) {
	bk := Book{Groups: l.groups, Producers: len(l.producers), Sent: []Marks{}, Reordered: make([]int64, len(l.producers)), Unknown: l.unknown.Load(),
		PoisonEvery: l.poisonEvery}
	for p, b := range l.producers {
		b.mu.Lock()
		err := b.book(&bk, p, local(p))
		b.mu.Unlock()
		if err != nil {
			return Book{}, err
		}
	}
	return bk, nil
}

// book adds one producer's marks to bk. b.mu is held.
func (b *producerBook) book(bk *Book, p int, local bool) error {
	bk.Reordered[p] = b.reordered
	if local {
		flags := make([]byte, len(b.flags))
		for i, f := range b.flags {
			flags[i] = f & bookFlags
		}
		d, err := pack(trimZeros(flags))
		if err != nil {
			return err
		}
		bk.Sent = append(bk.Sent, Marks{Producer: p, Data: d})
	}
	for g, counts := range b.deliveries {
		var buf []byte
		last := -1
		for i, c := range counts {
			if c > 0 {
				last = i
			}
		}
		if last >= 0 {
			for _, c := range counts[:last+1] {
				buf = binary.AppendUvarint(buf, uint64(c))
			}
			d, err := pack(buf)
			if err != nil {
				return err
			}
			bk.Received = append(bk.Received, Marks{Group: g, Producer: p, Data: d})
		}
		if b.found != nil && len(b.found[g]) > 0 {
			words := make([]byte, 0, 8*len(b.found[g]))
			for _, w := range b.found[g] {
				words = binary.LittleEndian.AppendUint64(words, w)
			}
			d, err := pack(trimZeros(words))
			if err != nil {
				return err
			}
			bk.Found = append(bk.Found, Marks{Group: g, Producer: p, Data: d})
		}
	}
	return nil
}

// Union joins the books of every segment of a run into one ledger; Close then gives the run's
// totals. Every producer's marks must come from exactly one book (the segment that ran it); a
// producer no book ran, or two books ran, is an error (a missing or repeated segment).
func Union(books []Book) (*Ledger, error) {
	if len(books) == 0 {
		return nil, errors.New("no ledger books to join")
	}
	groups, producers := books[0].Groups, books[0].Producers
	l := NewGroups(producers, groups)
	l.SetPoison(books[0].PoisonEvery)
	ran := make([]int, producers)
	for i, bk := range books {
		if bk.Groups != groups || bk.Producers != producers {
			return nil, fmt.Errorf("book %d has %d producers and %d groups, book 1 %d and %d", i+1, bk.Producers, bk.Groups, producers, groups)
		}
		for _, m := range bk.Sent {
			if err := l.check(m); err != nil {
				return nil, fmt.Errorf("book %d: %w", i+1, err)
			}
			if ran[m.Producer]++; ran[m.Producer] > 1 {
				return nil, fmt.Errorf("producer %d's messages are in more than one book", m.Producer)
			}
			flags, err := unpack(m.Data)
			if err != nil {
				return nil, fmt.Errorf("book %d, producer %d: %w", i+1, m.Producer, err)
			}
			b := l.producers[m.Producer]
			if len(flags) > 0 {
				b.grow(uint64(len(flags) - 1))
			}
			for s, f := range flags {
				b.flags[s] |= f & bookFlags
				if f&flagAcked != 0 {
					l.acked.Add(1)
				}
			}
		}
		for _, m := range bk.Received {
			if err := l.receive(m); err != nil {
				return nil, fmt.Errorf("book %d: %w", i+1, err)
			}
		}
		for _, m := range bk.Found {
			if err := l.found(m); err != nil {
				return nil, fmt.Errorf("book %d: %w", i+1, err)
			}
		}
		if err := l.unionTimes(bk); err != nil {
			return nil, fmt.Errorf("book %d: %w", i+1, err)
		}
		for p, n := range bk.Reordered {
			if p < producers {
				l.producers[p].reordered += n
			}
		}
		l.unknown.Add(bk.Unknown)
	}
	for p, n := range ran {
		if n == 0 {
			return nil, fmt.Errorf("no book ran producer %d", p)
		}
	}
	return l, nil
}

func (l *Ledger) check(m Marks) error {
	if m.Producer < 0 || m.Producer >= len(l.producers) || m.Group < 0 || m.Group >= l.groups {
		return fmt.Errorf("marks for producer %d, group %d: out of range", m.Producer, m.Group)
	}
	return nil
}

// unpackMarks checks that m is in range and returns its data unpacked.
func (l *Ledger) unpackMarks(m Marks) ([]byte, error) {
	if err := l.check(m); err != nil {
		return nil, err
	}
	return unpack(m.Data)
}

func (l *Ledger) receive(m Marks) error {
	raw, err := l.unpackMarks(m)
	if err != nil {
		return err
	}
	b := l.producers[m.Producer]
	for seq := uint64(0); len(raw) > 0; seq++ {
		c, n := binary.Uvarint(raw)
		if n <= 0 {
			return fmt.Errorf("producer %d, group %d: bad delivery counts", m.Producer, m.Group)
		}
		raw = raw[n:]
		if c == 0 {
			continue
		}
		b.grow(seq)
		b.deliveries[m.Group][seq] += uint32(c)
	}
	return nil
}

func (l *Ledger) found(m Marks) error {
	raw, err := l.unpackMarks(m)
	if err != nil {
		return err
	}
	b := l.producers[m.Producer]
	if b.found == nil {
		b.found = make([][]uint64, l.groups)
	}
	for len(raw)%8 != 0 {
		raw = append(raw, 0)
	}
	f := b.found[m.Group]
	for i := 0; i < len(raw)/8; i++ {
		if i >= len(f) {
			f = append(f, 0)
		}
		f[i] |= binary.LittleEndian.Uint64(raw[8*i:])
	}
	b.found[m.Group] = f
	return nil
}

func trimZeros(b []byte) []byte {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return b[:n]
}

func pack(b []byte) (string, error) {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(b); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// maxUnpacked bounds one decompressed mark string (a corrupt or hostile file must not take the
// machine's memory): 1 GiB is over 100 million messages of one producer.
const maxUnpacked = 1 << 30

func unpack(s string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), maxUnpacked+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxUnpacked {
		return nil, errors.New("marks too large")
	}
	return out, nil
}
