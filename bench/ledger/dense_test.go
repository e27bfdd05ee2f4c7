package ledger

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"qbench/scenarios"
)

// A frozen block gives back exactly the marks it was made from, read whole (decode) or one by
// one (flags, count, shard, entry), for the backlogs it is made for: paced and rate: max times,
// batches answered with the producer's next number, groups that received all, none or some of
// the block, shard marks; and a block whose differences are too wide stays hot.
func TestDenseBlockKeepsEveryMark(t *testing.T) {
	cases := []struct {
		name     string
		groups   int
		shards   bool
		rateMax  bool   // a batch's messages share one time
		maxBatch int    // batches of 1 to maxBatch
		jump     int64  // a time jump this large at one message (too wide: stays hot)
		deliver  string // per group: "all", "none" or "some"
	}{
		{"paced, single sends, undelivered", 1, false, false, 1, 0, "none"},
		{"paced, batches of 16", 1, false, false, 16, 0, "none"},
		{"rate: max, batches up to 64", 2, false, true, 64, 0, "none,all"},
		{"one shard's consumer stopped", 3, true, false, 8, 0, "some,all,none"},
		{"rate: max blocked 10 s by an engine stall", 1, false, true, 16, 10e9, "none"},
		{"a jump too wide to pack", 1, false, false, 16, 1 << 50, "none"},
	}
	for _, tc := range cases {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("%s/seed=%d", tc.name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7))
				w := newWindow(tc.groups, nil, nil)
				w.shards = tc.shards
				bl := w.newBlock()
				deliver := strings.Split(tc.deliver, ",")
				t0 := rng.Int64N(1e12)
				for o := 0; o < blockSize; {
					n := min(1+rng.IntN(tc.maxBatch), blockSize-o)
					next := uint32(n + rng.IntN(3)*tc.maxBatch) // claimed meanwhile
					if tc.rateMax {
						t0 += 1 + rng.Int64N(20_000)
					}
					for i := range n {
						if !tc.rateMax {
							t0 += 10_000 + rng.Int64N(2)
						}
						if o+i == blockSize/2 {
							t0 += tc.jump
						}
						e := &bl.ent[o+i]
						e.intended, e.after, e.flags = t0, next-uint32(i), flagSent|flagAcked
						if i == 0 {
							e.flags |= flagBatchStart
						}
					}
					o += n
				}
				for g, mode := range deliver {
					for o := range blockSize {
						got := mode == "all" || (mode == "some" && rng.IntN(2) == 0)
						if got {
							bl.d[g][o] = 1
							if tc.shards {
								bl.sh[g][o] = uint16(1 + rng.IntN(6))
							}
						}
					}
				}
				if v := freezable(bl); v != freezeNow {
					t.Fatalf("freezable: %d", v)
				}
				fz := freezeBlock(bl)
				if tc.jump >= 1<<maxDenseBits {
					if fz != nil {
						t.Fatal("a block with a jump wider than maxDenseBits was frozen")
					}
					return
				}
				if fz == nil {
					t.Fatal("not frozen")
				}
				back := w.newBlock()
				fz.decode(back)
				for o := range blockSize {
					if back.ent[o] != bl.ent[o] || fz.flags(o) != bl.ent[o].flags {
						t.Fatalf("message %d: decoded %+v (flags %x), want %+v", o, back.ent[o], fz.flags(o), bl.ent[o])
					}
					if o%97 == 0 && fz.entry(o) != bl.ent[o] {
						t.Fatalf("message %d: entry %+v, want %+v", o, fz.entry(o), bl.ent[o])
					}
					for g := range tc.groups {
						if back.d[g][o] != bl.d[g][o] || fz.count(g, o) != bl.d[g][o] {
							t.Fatalf("message %d group %d: count %d/%d, want %d", o, g, back.d[g][o], fz.count(g, o), bl.d[g][o])
						}
						if tc.shards && (back.sh[g][o] != bl.sh[g][o] || fz.shard(g, o) != bl.sh[g][o]) {
							t.Fatalf("message %d group %d: shard %d/%d, want %d", o, g, back.sh[g][o], fz.shard(g, o), bl.sh[g][o])
						}
					}
				}
				hot := int64(blockSize * (16 + 4*tc.groups))
				t.Logf("%d bytes frozen, %.2f a message (%d hot)", fz.bytes(), float64(fz.bytes())/blockSize, hot)
				if fz.bytes() >= hot/3 {
					t.Fatalf("frozen in %d bytes, not much less than %d hot", fz.bytes(), hot)
				}
			})
		}
	}
}

// A block with a failed message, a duplicate or an unanswered message does not freeze.
func TestDenseBlockRefusesOtherMarks(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(bl *block)
		want freezeVerdict
	}{
		{"unanswered", func(bl *block) { bl.ent[700].flags = flagSent }, freezeLater},
		{"failed", func(bl *block) { bl.ent[700].flags = flagSent | flagFailed }, freezeNever},
		{"delivered twice", func(bl *block) { bl.d[0][3] = 2 }, freezeNever},
	} {
		w := newWindow(1, nil, nil)
		bl := w.newBlock()
		for o := range bl.ent {
			bl.ent[o] = entry{intended: int64(o), after: 1, flags: flagSent | flagAcked}
		}
		tc.edit(bl)
		if got := freezable(bl); got != tc.want {
			t.Errorf("%s: verdict %d, want %d", tc.name, got, tc.want)
		}
	}
}

// The memory budget's figures are the dense form's: how much of a producer's backlog stays hot
// (the spill window, the freeze threshold and the blocks that never freeze at the window's
// ends), and the most a frozen message costs.
func TestDenseFiguresMatchTheBudget(t *testing.T) {
	if hot := freezeAfterMessages + (2*hotTail+2)*blockSize; hot != scenarios.HotWindowMessages {
		t.Errorf("hot window %d, the budget assumes %d", hot, scenarios.HotWindowMessages)
	}
	for _, groups := range []int{1, 2, 20} {
		var fz frozen
		most := float64(unsafe.Sizeof(fz)+2*8)/blockSize + float64(maxDenseBits+1+groups*(1+16))/8 // two words' rounding
		if got := scenarios.DenseBytesPerMessage(groups); got < most {
			t.Errorf("%d groups: the budget assumes %.3g bytes a frozen message, it can take %.3g", groups, got, most)
		}
	}
}
