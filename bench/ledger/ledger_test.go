package ledger

import (
	"errors"
	"sync"
	"testing"
)

func TestLedgerCountsEachMessage(t *testing.T) {
	l := New(2)
	// producer 0: seq 0 acked+delivered, 1 acked+delivered twice, 2 acked never delivered,
	// 3 failed never delivered, 4 failed but delivered.
	l.Sent(0, 0, true)
	l.Sent(0, 1, true)
	l.Sent(0, 2, true)
	l.Sent(0, 3, false)
	l.Sent(0, 4, false)
	l.Delivered(0, 0)
	l.Delivered(0, 1)
	l.Delivered(0, 1)
	l.Delivered(0, 4)
	// producer 1: delivery arrives before the producer records the ack (common on fast engines).
	if !l.Delivered(1, 5000) {
		t.Fatal("first delivery not reported as first")
	}
	l.Sent(1, 5000, true)
	l.Delivered(1, 9999) // never sent
	l.Delivered(7, 1)    // no such producer

	got, lost := l.Close(10)
	want := Totals{Sent: 6, Acked: 4, Failed: 2, Delivered: 5, Deliveries: 6, Lost: 1,
		Duplicates: 1, DuplicatedMessages: 1, DeliveredUnacked: 1, Phantom: 1, Unknown: 1, Reordered: 0}
	if got != want {
		t.Fatalf("totals\n got %+v\nwant %+v", got, want)
	}
	if len(lost) != 1 || lost[0] != (LostMessage{Producer: 0, Seq: 2}) {
		t.Fatalf("lost = %v", lost)
	}
}

func TestLedgerConcurrentMarks(t *testing.T) {
	const producers, perProducer = 4, 20000
	l := New(producers)
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for s := uint64(0); s < perProducer; s++ {
				l.Sent(p, s, true)
			}
		}()
		go func() {
			defer wg.Done()
			for s := uint64(0); s < perProducer; s += 2 { // every other message delivered
				l.Delivered(p, s)
			}
		}()
	}
	wg.Wait()
	got, _ := l.Close(0)
	if got.Acked != producers*perProducer || got.Lost != producers*perProducer/2 || got.Duplicates != 0 {
		t.Fatalf("totals %+v", got)
	}
}

// Each group is owed every message: a message one subscriber missed is lost to that subscriber
// even though another received it, and two groups receiving it once each is no duplicate.
func TestLedgerGroups(t *testing.T) {
	l := NewGroups(1, 2)
	for s := uint64(0); s < 4; s++ {
		l.Sent(0, s, true)
		l.DeliveredTo(0, 0, s)
	}
	l.DeliveredTo(1, 0, 0)
	l.DeliveredTo(1, 0, 1)
	if got := l.DeliveredUnique(); got != 2 {
		t.Fatalf("DeliveredUnique = %d, want the slowest group's 2", got)
	}
	got, lost := l.Close(10)
	if got.Acked != 4 || got.Delivered != 6 || got.Lost != 2 || got.Duplicates != 0 {
		t.Fatalf("totals %+v", got)
	}
	if len(lost) != 2 || lost[0] != (LostMessage{Group: 1, Producer: 0, Seq: 2}) {
		t.Fatalf("lost %v", lost)
	}
}

func TestLedgerCountsReordering(t *testing.T) {
	l := New(1)
	for _, seq := range []uint64{0, 2, 1, 3, 3, 5, 4} {
		l.Sent(0, seq, true)
		l.Delivered(0, seq)
	}
	got, _ := l.Close(0)
	if got.Reordered != 2 || got.Duplicates != 1 {
		t.Fatalf("reordered %d duplicates %d, want 2 and 1", got.Reordered, got.Duplicates)
	}
}

func TestLedgerAttributesLossToFaultWindows(t *testing.T) {
	l := New(1)
	// Messages intended at 0..9 s; windows [2 s, 3 s] and [6 s, 7 s].
	for s := uint64(0); s < 10; s++ {
		l.SentAt(0, s, true, int64(s)*1e9)
	}
	for _, s := range []uint64{0, 3, 4, 5, 7, 8} {
		l.Delivered(0, s)
	}
	l.Delivered(0, 8) // a duplicate after the last window: charged to none
	l.Delivered(0, 4) // a duplicate between the windows: charged to the second
	// lost: 1, 2 (first window), 6 (second), 9 (after both: none)
	got := l.Attribute([]Window{{StartNs: 2e9, EndNs: 3e9}, {StartNs: 6e9, EndNs: 7e9}})
	// The loss window: the oldest lost message of each window (1 s, 6 s) and the newest
	// acknowledged message before it that survived, the last durable point (0 s, 5 s).
	want := []WindowTotals{{Lost: 2, OldestLostNs: 1e9, LastDurableNs: 0}, {Lost: 1, Duplicates: 1, OldestLostNs: 6e9, LastDurableNs: 5e9}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// A pause only delays: a loss it overlaps with a crash is charged to the crash.
func TestLedgerChargesLossToDestructiveFault(t *testing.T) {
	l := New(1)
	l.SentAt(0, 0, true, 1e9)
	got := l.Attribute([]Window{{StartNs: 0, EndNs: 2e9}, {StartNs: 1e9, EndNs: 3e9, Destructive: true}})
	if got[0].Lost != 0 || got[1].Lost != 1 {
		t.Fatalf("got %+v", got)
	}
}

// Every acknowledged message ends, for each group, as exactly one of delivered, queued (found held
// by the engine at the end) or lost (neither): a backlog is never counted as loss, and a fault
// window is charged only what is gone.
func TestLedgerQueuedIsNotLost(t *testing.T) {
	type mark struct {
		group int
		seq   uint64
	}
	cases := []struct {
		name                            string
		groups                          int
		acked, failed                   []uint64
		delivered, found                []mark
		wantDelivered, wantQueued, lost int64
		wantLostList                    []LostMessage
		windowLost                      int64 // charged to one window covering every message
	}{
		{name: "nothing found: undelivered is lost", groups: 1, acked: []uint64{0, 1, 2, 3},
			delivered: []mark{{0, 0}, {0, 1}}, wantDelivered: 2, lost: 2,
			wantLostList: []LostMessage{{Seq: 2}, {Seq: 3}}, windowLost: 2},
		{name: "backlog found: queued, not lost", groups: 1, acked: []uint64{0, 1, 2, 3},
			delivered: []mark{{0, 0}, {0, 1}}, found: []mark{{0, 2}, {0, 3}}, wantDelivered: 2, wantQueued: 2},
		{name: "part found, part gone", groups: 1, acked: []uint64{0, 1, 2, 3},
			delivered: []mark{{0, 0}}, found: []mark{{0, 2}}, wantDelivered: 1, wantQueued: 1, lost: 2,
			wantLostList: []LostMessage{{Seq: 1}, {Seq: 3}}, windowLost: 2},
		{name: "found and delivered counts delivered once", groups: 1, acked: []uint64{0, 1},
			delivered: []mark{{0, 0}, {0, 1}}, found: []mark{{0, 0}, {0, 1}, {0, 1}}, wantDelivered: 2},
		{name: "found per group", groups: 2, acked: []uint64{0, 1},
			delivered: []mark{{0, 0}, {0, 1}, {1, 0}}, found: []mark{{0, 1}}, wantDelivered: 3, lost: 1,
			wantLostList: []LostMessage{{Group: 1, Seq: 1}}, windowLost: 1},
		{name: "failed or never sent, found: not classified", groups: 1, acked: []uint64{0}, failed: []uint64{1},
			delivered: []mark{{0, 0}}, found: []mark{{0, 1}, {0, 5000}, {3, 0}, {-1, 0}}, wantDelivered: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := NewGroups(1, c.groups)
			for _, s := range c.acked {
				l.SentAt(0, s, true, 1)
			}
			for _, s := range c.failed {
				l.SentAt(0, s, false, 1)
			}
			for _, d := range c.delivered {
				l.DeliveredTo(d.group, 0, d.seq)
			}
			for _, f := range c.found {
				l.Found(f.group, 0, f.seq)
			}
			l.Found(0, 9, 0) // no such producer: ignored
			got, lost := l.Close(10)
			if got.Delivered != c.wantDelivered || got.Queued != c.wantQueued || got.Lost != c.lost {
				t.Fatalf("delivered %d queued %d lost %d, want %d %d %d", got.Delivered, got.Queued, got.Lost,
					c.wantDelivered, c.wantQueued, c.lost)
			}
			if sum, want := got.Delivered-got.DeliveredUnacked+got.Queued+got.Lost, got.Acked*int64(c.groups); sum != want {
				t.Fatalf("delivered + queued + lost = %d, want acked x groups = %d", sum, want)
			}
			if len(lost) != len(c.wantLostList) {
				t.Fatalf("lost list %v, want %v", lost, c.wantLostList)
			}
			for i := range lost {
				if lost[i] != c.wantLostList[i] {
					t.Fatalf("lost list %v, want %v", lost, c.wantLostList)
				}
			}
			if w := l.Attribute([]Window{{StartNs: 0, EndNs: 10, Destructive: true}}); w[0].Lost != c.windowLost {
				t.Fatalf("window charged %d lost, want %d", w[0].Lost, c.windowLost)
			}
		})
	}
}

// The reorder rule with batches in flight: a message sent after another was acknowledged must
// arrive after it, and so must a later message of its own batch; a message of another batch that
// was in flight at the same time may arrive first.
func TestLedgerReorderRuleWithBatchesInFlight(t *testing.T) {
	type batch struct {
		first uint64
		n     int
		next  uint64 // the producer's next sequence number when the batch was acknowledged
	}
	type event struct {
		ack     int      // answer batch number ack (index into batches), or
		deliver []uint64 // deliver these sequence numbers, in order
	}
	ack := func(i int) event { return event{ack: i} }
	deliver := func(s ...uint64) event { return event{ack: -1, deliver: s} }
	cases := []struct {
		name    string
		batches []batch
		events  []event
		want    int64
	}{
		{"one batch at a time, in order", []batch{{0, 2, 2}, {2, 2, 4}},
			[]event{ack(0), ack(1), deliver(0, 1, 2, 3)}, 0},
		{"in flight together, second batch first", []batch{{0, 2, 4}, {2, 2, 4}},
			[]event{ack(1), ack(0), deliver(2, 3, 0, 1)}, 0},
		{"interleaved batches, each in its own order", []batch{{0, 3, 6}, {3, 3, 6}},
			[]event{ack(0), ack(1), deliver(3, 0, 4, 1, 5, 2)}, 0},
		{"sent after the first was acknowledged, delivered before it", []batch{{0, 2, 2}, {2, 2, 4}},
			[]event{ack(0), ack(1), deliver(2, 3, 0, 1)}, 2},
		{"order broken within a batch", []batch{{0, 3, 3}},
			[]event{ack(0), deliver(0, 2, 1)}, 1},
		{"within a batch, in flight with another", []batch{{0, 3, 6}, {3, 3, 6}},
			[]event{ack(0), ack(1), deliver(3, 4, 5, 2, 0, 1)}, 2},
		// B (2,3) was acknowledged before C (4,5) was sent, A (0,1) only after: C before B is the
		// engine's doing, C and B before A is not.
		{"acknowledged out of order", []batch{{0, 2, 6}, {2, 2, 4}, {4, 2, 6}},
			[]event{ack(1), ack(2), ack(0), deliver(4, 5, 2, 3, 0, 1)}, 2},
		// Deliveries often beat the producer's record of the acknowledgement; a batch in flight
		// with another is then still judged by its batch alone.
		{"delivered before the acknowledgement was recorded", []batch{{0, 2, 4}, {2, 2, 4}},
			[]event{deliver(2, 3, 0, 1), ack(0), ack(1)}, 0},
		{"delivered before the acknowledgement, out of batch order", []batch{{0, 2, 4}, {2, 2, 4}},
			[]event{deliver(2, 3, 1, 0), ack(0), ack(1)}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := New(1)
			for _, b := range c.batches {
				l.Batch(0, b.first, b.n)
			}
			for _, e := range c.events {
				if e.ack >= 0 {
					b := c.batches[e.ack]
					l.SentBatch(0, b.first, make([]error, b.n), make([]int64, b.n), b.next)
					continue
				}
				for _, s := range e.deliver {
					l.Delivered(0, s)
				}
			}
			got, _ := l.Close(0)
			if got.Reordered != c.want {
				t.Fatalf("reordered %d, want %d", got.Reordered, c.want)
			}
			if got.Acked != got.Sent || got.Lost != 0 {
				t.Fatalf("totals %+v", got)
			}
		})
	}
}

// SentBatch counts acknowledgements and failures per message, like Sent.
func TestLedgerSentBatchMarksEachMessage(t *testing.T) {
	l := New(1)
	l.Batch(0, 0, 3)
	l.SentBatch(0, 0, []error{nil, errors.New("no"), nil}, []int64{1, 2, 3}, 3)
	if l.Acked() != 2 {
		t.Fatalf("Acked = %d, want 2", l.Acked())
	}
	l.Delivered(0, 0)
	got, lost := l.Close(10)
	if got.Sent != 3 || got.Acked != 2 || got.Failed != 1 || got.Lost != 1 || len(lost) != 1 || lost[0].Seq != 2 {
		t.Fatalf("totals %+v lost %v", got, lost)
	}
}

// A consume-only run's ledger knows deliveries, not sends: a second delivery is a duplicate, a
// delivery of a number it never saw sent is no phantom, nothing is lost or queued, and foreign
// messages are counted apart.
func TestReceiveOnlyLedgerCountsDeliveriesAndForeign(t *testing.T) {
	l := NewReceiveOnly(2, 1)
	for _, m := range []struct {
		p   int
		seq uint64
	}{{0, 0}, {0, 1}, {1, 0}, {0, 1}, {0, 5}, {0, 3}, {3, 0}} {
		l.DeliveredTo(0, m.p, m.seq)
	}
	l.Foreign()
	l.Foreign()
	tot, lost := l.Close(10)
	want := Totals{Delivered: 5, Deliveries: 6, Duplicates: 1, DuplicatedMessages: 1, Unknown: 1, Foreign: 2}
	if tot != want || len(lost) != 0 {
		t.Fatalf("totals %+v lost %v, want %+v", tot, lost, want)
	}
}

// With shards the order rule holds per shard: a later message on another shard (another key)
// arriving first is no fault of the engine; on the same shard it still is.
func TestLedgerReorderRulePerShard(t *testing.T) {
	evenOdd := func(_ int, seq uint64) int { return int(seq % 2) } // round robin over two shards
	cases := []struct {
		name    string
		shards  int
		batches [][3]uint64 // first, n, next
		deliver []uint64
		want    int64
	}{
		{"one shard: later message first is reordered", 1, [][3]uint64{{0, 1, 1}, {1, 1, 2}, {2, 1, 3}}, []uint64{1, 0, 2}, 1},
		{"two shards: later message of the other shard first", 2, [][3]uint64{{0, 1, 1}, {1, 1, 2}, {2, 1, 3}}, []uint64{1, 0, 2}, 0},
		{"two shards: later message of the same shard first", 2, [][3]uint64{{0, 1, 1}, {1, 1, 2}, {2, 1, 3}}, []uint64{2, 0, 1}, 1},
		{"two shards: one batch, other shard's later message first", 2, [][3]uint64{{0, 4, 4}}, []uint64{1, 3, 0, 2}, 0},
		{"two shards: one batch, same shard's later message first", 2, [][3]uint64{{0, 4, 4}}, []uint64{2, 0, 1, 3}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := New(1)
			l.SetShards(c.shards, evenOdd)
			for _, b := range c.batches {
				l.Batch(0, b[0], int(b[1]))
				l.SentBatch(0, b[0], make([]error, b[1]), make([]int64, b[1]), b[2])
			}
			for _, s := range c.deliver {
				l.Delivered(0, s)
			}
			got, _ := l.Close(0)
			if got.Reordered != c.want {
				t.Fatalf("reordered %d, want %d", got.Reordered, c.want)
			}
		})
	}
}
