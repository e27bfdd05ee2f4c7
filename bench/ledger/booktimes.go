package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A segmented run's fault windows are costed over every segment (qbench merge): a window one
// segment fired is charged the loss, duplicates and failed sends of all of them. The union
// ledger then needs what a run of one process keeps in memory: each message's intended time
// (loss and duplicates are charged by it, Attribute) and when each failed send was answered (a
// failed send is charged among the windows begun by then, ChargeFailed). A book carries both
// when its run had fault windows (BookTimes), on its segment's clock shifted to the run's shared
// timeline by ShiftNs, so that the union holds every segment's times on one clock.

// failure is one failed send: its sequence number and when its answer came (ns since the epoch).
type failure struct {
	seq uint64
	at  int64
}

// FailedAt records when the failed sends of a batch answered at atNs were answered (errs[i]
// non-nil: message first+i failed), for ChargeFailed over a union of segments' books. Only
// failures are kept: a run's sends rarely fail in bulk, and then only for a fault's span.
func (l *Ledger) FailedAt(producer int, first uint64, errs []error, atNs int64) {
	b := l.producers[producer]
	b.mu.Lock()
	for i, err := range errs {
		if err != nil {
			b.failedAt = append(b.failedAt, failure{first + uint64(i), atNs})
		}
	}
	b.mu.Unlock()
}

// BookTimes is Book with each local producer's intended times and failure times, shifted by
// shiftNs onto the run's shared timeline (ns since the shared start, on the engine's clock).
func (l *Ledger) BookTimes(local func(producer int) bool, shiftNs int64) (Book, error) {
	bk, err := l.Book(local)
	if err != nil {
		return Book{}, err
	}
	bk.ShiftNs = shiftNs
	for p, b := range l.producers {
		if !local(p) {
			continue
		}
		b.mu.Lock()
		n := len(trimZeros(b.flags))
		var buf []byte
		var last int64
		for _, t := range b.intended[:n] {
			buf = binary.AppendVarint(buf, t-last)
			last = t
		}
		var fails []byte
		var lastSeq uint64
		last = 0
		for _, f := range b.failedAt {
			fails = binary.AppendVarint(fails, int64(f.seq-lastSeq)) // answers may come out of order
			fails = binary.AppendVarint(fails, f.at-last)
			lastSeq, last = f.seq, f.at
		}
		b.mu.Unlock()
		d, err := pack(buf)
		if err != nil {
			return Book{}, err
		}
		bk.Intended = append(bk.Intended, Marks{Producer: p, Data: d})
		if len(fails) > 0 {
			if d, err = pack(fails); err != nil {
				return Book{}, err
			}
			bk.Failed = append(bk.Failed, Marks{Producer: p, Data: d})
		}
	}
	return bk, nil
}

// unionTimes joins one book's intended and failure times into l, shifted onto the shared
// timeline.
func (l *Ledger) unionTimes(bk Book) error {
	if len(bk.Sent) > 0 && len(bk.Intended) == 0 {
		l.untimed = true // a book without times: its messages cannot be charged by time
	}
	for _, m := range bk.Intended {
		raw, err := l.unpackMarks(m)
		if err != nil {
			return err
		}
		b := l.producers[m.Producer]
		var t int64
		for seq := uint64(0); len(raw) > 0; seq++ {
			d, n := binary.Varint(raw)
			if n <= 0 {
				return fmt.Errorf("producer %d: bad intended times", m.Producer)
			}
			raw, t = raw[n:], t+d
			b.grow(seq)
			b.intended[seq] = t + bk.ShiftNs
		}
		l.timed = true
	}
	for _, m := range bk.Failed {
		raw, err := l.unpackMarks(m)
		if err != nil {
			return err
		}
		b := l.producers[m.Producer]
		var seq uint64
		var at int64
		for len(raw) > 0 {
			ds, n := binary.Varint(raw)
			if n <= 0 {
				return fmt.Errorf("producer %d: bad failure times", m.Producer)
			}
			raw = raw[n:]
			da, k := binary.Varint(raw)
			if k <= 0 {
				return fmt.Errorf("producer %d: bad failure times", m.Producer)
			}
			raw, seq, at = raw[k:], seq+uint64(ds), at+da
			b.failedAt = append(b.failedAt, failure{seq, at + bk.ShiftNs})
		}
	}
	return nil
}

// ErrNoTimes: a union's books carry no intended times (their runs had no fault windows, or
// they were written before books carried them), so windows cannot be charged over them.
var ErrNoTimes = errors.New("the segments' ledger books carry no intended times")

// ChargeFailed charges each failed send as the runner of one process does (bench's
// chargeProduceErrors): to the window ledger.Charge picks for its intended time among the
// windows begun when its answer came, so a fault never pays for a failure from before it began.
// windows are sorted by start, on the timeline of the failure times.
func (l *Ledger) ChargeFailed(windows []Window) []int64 {
	out := make([]int64, len(windows))
	for _, b := range l.producers {
		b.mu.Lock()
		for _, f := range b.failedAt {
			begun := 0
			for begun < len(windows) && windows[begun].StartNs <= f.at {
				begun++
			}
			if f.seq >= uint64(len(b.intended)) {
				continue
			}
			if i := Charge(windows[:begun], b.intended[f.seq]); i >= 0 {
				out[i]++
			}
		}
		b.mu.Unlock()
	}
	return out
}

// Timed reports whether the union holds every sending book's intended times: only then can
// its costs be charged to windows by time.
func (l *Ledger) Timed() bool { return l.timed && !l.untimed }
