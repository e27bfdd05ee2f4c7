package ledger

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
)

// The compact ledger gives the reference ledger's answers on the same marks: every total, every
// lost message, and every fault window's lost, duplicates and oldest loss. Its last durable point
// may be earlier, by less than one chunk of settled messages of one producer (see Compact).
func TestCompactMatchesReference(t *testing.T) {
	base := simConfig{producers: 3, groups: 2, perProducer: 120_000, reorder: 0.001, duplicate: 0.0001,
		fail: 0.002, failDelivered: 0.1, lose: 0.0001, backlog: 0.05, tail: 0.05, crashes: 4}
	cases := []struct {
		name    string
		edit    func(c *simConfig)
		spillAt int  // 0: the default
		freezes bool // some of the backlog's blocks must freeze (when spillAt is set)
	}{
		{"in order, nothing wrong", func(c *simConfig) {
			*c = simConfig{producers: 2, groups: 1, perProducer: 100_000}
		}, 0, false},
		{"the mix", func(*simConfig) {}, 0, false},
		{"the mix, spilling early", func(*simConfig) {}, 2 * spillBlock, false},
		{"one group, many losses", func(c *simConfig) { c.groups, c.lose = 1, 0.01 }, 2 * spillBlock, false},
		{"three groups, poison retries", func(c *simConfig) { c.groups, c.poison = 3, 997 }, 2 * spillBlock, false},
		{"heavy reordering and duplicates", func(c *simConfig) { c.reorder, c.duplicate = 0.05, 0.01 }, 2 * spillBlock, false},
		{"long backlog", func(c *simConfig) { c.backlog, c.tail = 0.3, 0.2 }, 2 * spillBlock, true},
		{"long backlog, in order", func(c *simConfig) {
			*c = simConfig{producers: 2, groups: 2, perProducer: 100_000, backlog: 0.3, tail: 0.2}
		}, 2 * spillBlock, true},
		{"long backlog of one shard, shards by delivery", func(c *simConfig) {
			c.backlog, c.tail, c.shards, c.stallOneShard = 0.3, 0.2, -2, true
		}, 2 * spillBlock, true},
		{"long backlog, one group, rate: max times", func(c *simConfig) {
			*c = simConfig{producers: 2, groups: 1, perProducer: 100_000, backlog: 0.3, tail: 0.2, batchTime: true, reorder: 0.001}
		}, 2 * spillBlock, true},
		{"shards by routing", func(c *simConfig) { c.shards = 2 }, 2 * spillBlock, false},
		{"shards by delivery", func(c *simConfig) { c.shards = -2 }, 2 * spillBlock, false},
		{"no order promised", func(c *simConfig) { c.noOrder = true }, 2 * spillBlock, false},
		{"a batch's messages share their intended time", func(c *simConfig) { c.batchTime = true }, 2 * spillBlock, false},
		{"a producer stops early: chunks close by force", func(c *simConfig) { c.stopEarly = true }, 2 * spillBlock, false},
	}
	for i, tc := range cases {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/seed=%d", tc.name, seed), func(t *testing.T) {
				c := base
				tc.edit(&c)
				c.seed = seed*100 + uint64(i)
				run := simulate(c)
				ref, cmp := NewGroups(c.producers, c.groups), NewCompact(c.producers, c.groups)
				if tc.spillAt > 0 {
					// Spill early, and freeze a backlog's blocks early (dense.go).
					cmp.spillAt, cmp.maxOpen = tc.spillAt, 2
					for _, b := range cmp.producers {
						b.w.freezeAfter, b.w.hotBlocks = 2*blockSize, 2
					}
				}
				ref.SetPoison(c.poison)
				cmp.SetPoison(c.poison)
				evenOdd := func(_ int, seq uint64) int { return int(seq % 2) }
				switch {
				case c.shards > 0:
					ref.SetShards(c.shards, evenOdd)
					cmp.SetShards(c.shards, evenOdd)
				case c.shards < 0:
					ref.SetDeliveryShards()
					cmp.SetDeliveryShards()
				}
				if c.noOrder {
					ref.SetNoOrder()
					cmp.SetNoOrder()
				}
				run.play(ref, func(g, shard, p int, seq uint64, _ int64) { ref.DeliveredOn(g, shard, p, seq) })
				run.play(cmp, func(g, shard, p int, seq uint64, in int64) { cmp.DeliveredAt(g, shard, p, seq, in) })
				// An unknown producer and a foreign delivery, to both.
				ref.DeliveredTo(0, c.producers, 0)
				cmp.DeliveredTo(0, c.producers, 0)
				ref.Foreign()
				cmp.Foreign()
				if ref.Acked() != cmp.Acked() || ref.DeliveredUnique() != cmp.DeliveredUnique() {
					t.Fatalf("live counters: acked %d/%d, delivered unique %d/%d", ref.Acked(), cmp.Acked(), ref.DeliveredUnique(), cmp.DeliveredUnique())
				}
				want, wantLost := ref.Close(1 << 30)
				got, gotLost := cmp.Close(1 << 30)
				if got != want {
					t.Fatalf("totals\n got %+v\nwant %+v", got, want)
				}
				if !slices.Equal(gotLost, wantLost) {
					t.Fatalf("lost lists differ: %d and %d messages", len(gotLost), len(wantLost))
				}
				if len(wantLost) > 2 {
					if g, w := cmp.Close(2); !slices.Equal(w, gotLost[:2]) || g != got {
						t.Fatal("a capped lost list is not the first of the whole")
					}
				}
				wantW, gotW := ref.Attribute(run.windows), cmp.Attribute(run.windows)
				earlier := 0
				for k := range wantW {
					if gotW[k].LastDurableNs != wantW[k].LastDurableNs {
						earlier++
					}
					w, g := wantW[k], gotW[k]
					if g != w {
						t.Fatalf("window %d: got %+v, want %+v", k, g, w)
					}
				}
				kept, dense := cmp.Kept(), cmp.DenseBytes()
				if n, d := cmp.kept(); n != kept || d != dense {
					t.Fatalf("Kept %d, counted %d; DenseBytes %d, counted %d", kept, n, dense, d)
				}
				froze := 0
				for _, b := range cmp.producers {
					froze += b.w.froze
				}
				if tc.freezes && froze == 0 {
					t.Fatal("no block of the backlog was frozen: the dense form is not exercised")
				}
				t.Logf("lost %d duplicates %d reordered %d queued %d failed %d; kept one by one %d of %d, %d blocks frozen; last durable point earlier in %d of %d windows",
					got.Lost, got.Duplicates, got.Reordered, got.Queued, got.Failed, kept, got.Sent, froze, earlier, len(wantW))
			})
		}
	}
}

// The 10 M case (QBENCH_SOAK=1: about 1.5 GB and a minute): four producers, the mix of
// TestCompactMatchesReference, the same account from both ledgers.
func TestCompactMatchesReference10M(t *testing.T) {
	if os.Getenv("QBENCH_SOAK") != "1" {
		t.Skip("the 10 M message differential test runs with QBENCH_SOAK=1")
	}
	c := simConfig{seed: 10, producers: 4, groups: 1, perProducer: 2_500_000, reorder: 0.001, duplicate: 0.0001,
		fail: 0.002, failDelivered: 0.1, lose: 0.0001, backlog: 0.05, tail: 0.05, crashes: 20}
	run := simulate(c)
	ref, cmp := NewGroups(c.producers, c.groups), NewCompact(c.producers, c.groups)
	run.play(ref, func(g, shard, p int, seq uint64, _ int64) { ref.DeliveredOn(g, shard, p, seq) })
	run.play(cmp, func(g, shard, p int, seq uint64, in int64) { cmp.DeliveredAt(g, shard, p, seq, in) })
	want, wantLost := ref.Close(1 << 30)
	got, gotLost := cmp.Close(1 << 30)
	if got != want || !slices.Equal(gotLost, wantLost) {
		t.Fatalf("totals\n got %+v\nwant %+v\nlost lists of %d and %d", got, want, len(gotLost), len(wantLost))
	}
	wantW, gotW := ref.Attribute(run.windows), cmp.Attribute(run.windows)
	for k := range wantW {
		if w, g := wantW[k], gotW[k]; g != w {
			t.Fatalf("window %d: got %+v, want %+v", k, g, w)
		}
	}
	t.Logf("%+v; kept one by one %d", got, cmp.Kept())
}

// The first ledger test's marks, on the compact ledger: the same account.
func TestCompactCountsEachMessage(t *testing.T) {
	l := NewCompact(2, 1)
	l.Sent(0, 0, true)
	l.Sent(0, 1, true)
	l.Sent(0, 2, true)
	l.Sent(0, 3, false)
	l.Sent(0, 4, false)
	l.Delivered(0, 0)
	l.Delivered(0, 1)
	l.Delivered(0, 1)
	l.Delivered(0, 4)
	if !l.Delivered(1, 5000) {
		t.Fatal("first delivery not reported as first")
	}
	l.Sent(1, 5000, true)
	l.Delivered(1, 9999)
	l.Delivered(7, 1)
	got, lost := l.Close(10)
	want := Totals{Sent: 6, Acked: 4, Failed: 2, Delivered: 5, Deliveries: 6, Lost: 1,
		Duplicates: 1, DuplicatedMessages: 1, DeliveredUnacked: 1, Phantom: 1, Unknown: 1}
	if got != want {
		t.Fatalf("totals\n got %+v\nwant %+v", got, want)
	}
	if len(lost) != 1 || lost[0] != (LostMessage{Producer: 0, Seq: 2}) {
		t.Fatalf("lost = %v", lost)
	}
}

// Producers and consumers mark at once (run it with -race): one message in 100 lost, one in 1000
// delivered twice; the window spills its holes as it goes and stays short.
func TestCompactConcurrentMarks(t *testing.T) {
	const producers, perProducer, batch = 4, 40_000, 8
	l := NewCompact(producers, 1)
	l.spillAt = 2 * spillBlock
	var wg sync.WaitGroup
	for p := range producers {
		sent := make(chan uint64, 64)
		wg.Add(2)
		go func() {
			defer wg.Done()
			defer close(sent)
			errs, intended := make([]error, batch), make([]int64, batch)
			for s := uint64(0); s < perProducer; s += batch {
				l.Batch(p, s, batch)
				for i := range intended {
					intended[i] = int64(s) + int64(i)
				}
				l.SentBatch(p, s, errs, intended, s+batch)
				sent <- s
			}
		}()
		go func() {
			defer wg.Done()
			for s := range sent {
				for i := range uint64(batch) {
					if seq := s + i; seq%100 != 0 {
						l.DeliveredAt(0, 0, p, seq, int64(seq))
						if seq%1000 == 1 {
							l.DeliveredAt(0, 0, p, seq, int64(seq))
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	got, _ := l.Close(0)
	if got.Acked != producers*perProducer || got.Lost != producers*perProducer/100 || got.Duplicates != producers*perProducer/1000 {
		t.Fatalf("totals %+v", got)
	}
	counted, _ := l.kept()
	if n := l.Kept(); n != counted || n > producers*(perProducer/100+perProducer/1000+3*spillBlock) {
		t.Fatalf("kept %d (counted %d): the holes were not spilled", n, counted)
	}
}
