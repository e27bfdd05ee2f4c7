package ledger

import (
	"errors"
	"math/rand/v2"
	"slices"
)

// marker is what the reference Ledger and Compact both take: the simulated run drives both.
type marker interface {
	Batch(producer int, first uint64, n int)
	SentBatch(producer int, first uint64, errs []error, intendedNs []int64, next uint64)
	Found(group, producer int, seq uint64)
}

// simConfig is one simulated run: its messages' fates are drawn from seed.
type simConfig struct {
	seed                uint64
	producers, groups   int
	perProducer         int
	reorder, duplicate  float64 // per delivery
	fail, failDelivered float64 // per message; of the failed, delivered anyway
	lose                float64 // per message and group, never delivered
	backlog             float64 // the share of the run a group's consumers stall, then catch up
	tail                float64 // the share at the end never delivered (found held, or lost)
	crashes             int     // consumer crashes redelivering what they had received
	poison              uint64
	shards              int // 0: one queue; 2: SetShards even/odd; -2: SetDeliveryShards
	noOrder             bool
	// batchTime: a batch's messages share one intended time, as rate: max stamps them.
	batchTime bool
	// stopEarly: producer 0 sends a tenth of its messages, then stops.
	stopEarly bool
	// stallOneShard: a group's stall holds back only the even messages (one shard's consumer).
	stallOneShard bool
}

// simEvent is one mark, at a time of the simulated run.
type simEvent struct {
	at       int64
	kind     uint8 // 0 batch, 1 answer, 2 delivery, 3 found
	producer int
	group    int
	first    uint64
	n        int
	next     uint64
	intended int64
}

const (
	evBatch = iota
	evAnswer
	evDeliver
	evFound
)

// simRun is a simulated run's events in order, its fault windows and the longest span of
// intended times of retireChunk consecutive messages of a producer.
type simRun struct {
	events   []simEvent
	errs     map[[2]uint64][]error // producer, first -> the batch's answers
	intended [][]int64             // [producer][seq]
	windows  []Window
	chunk    int64
}

// simulate draws a run: each producer sends batches of 1 to 16 messages, up to two in flight;
// deliveries follow with a small delay, some reordered, duplicated, delayed by a group's stall,
// lost, or left held at the end; consumer crashes redeliver what was received shortly before.
func simulate(c simConfig) simRun {
	rng := rand.New(rand.NewPCG(c.seed, 34))
	run := simRun{errs: map[[2]uint64][]error{}, intended: make([][]int64, c.producers)}
	const gap = 1000 // ns between intended sends, on average
	total := int64(c.perProducer) * gap
	if c.batchTime {
		total /= 8 // a batch's messages (8.5 on average) take one step of time
	}
	stalls := make([][2]int64, c.groups)
	for g := range stalls {
		if c.backlog > 0 {
			start := rng.Int64N(total / 2)
			stalls[g] = [2]int64{start, start + int64(c.backlog*float64(total))}
		}
	}
	consumeEnd := total - int64(c.tail*float64(total))
	var crashes []int64
	for range c.crashes {
		crashes = append(crashes, rng.Int64N(total))
	}
	slices.Sort(crashes)
	for i := 0; i < 3; i++ {
		s := rng.Int64N(total)
		run.windows = append(run.windows, Window{StartNs: s, EndNs: s + rng.Int64N(total/8), Destructive: i != 1})
	}
	slices.SortFunc(run.windows, func(a, b Window) int { return int(a.StartNs - b.StartNs) })
	for p := range c.producers {
		t := int64(0)
		intended := make([]int64, c.perProducer)
		type claim struct {
			first uint64
			n     int
			at    int64
			ack   int64
		}
		var claims []claim
		count := c.perProducer
		if c.stopEarly && p == 0 {
			count /= 10
		}
		for seq := 0; seq < count; {
			n := min(1+rng.IntN(16), count-seq)
			for i := range n {
				if i == 0 || !c.batchTime {
					t += 1 + rng.Int64N(2*gap)
				}
				intended[seq+i] = t
			}
			claims = append(claims, claim{first: uint64(seq), n: n, at: t, ack: t + 1 + rng.Int64N(3*gap)})
			seq += n
		}
		run.intended[p] = intended
		for k, cl := range claims {
			// next: the producer's next sequence number when the answer came back.
			next := cl.first + uint64(cl.n)
			for _, later := range claims[k+1:] {
				if later.at > cl.ack {
					break
				}
				next = later.first + uint64(later.n)
			}
			errs := make([]error, cl.n)
			for i := range errs {
				if rng.Float64() < c.fail {
					errs[i] = errors.New("failed")
				}
			}
			run.errs[[2]uint64{uint64(p), cl.first}] = errs
			run.events = append(run.events,
				simEvent{at: cl.at, kind: evBatch, producer: p, first: cl.first, n: cl.n},
				simEvent{at: cl.ack, kind: evAnswer, producer: p, first: cl.first, n: cl.n, next: next})
			for i := range cl.n {
				seq := cl.first + uint64(i)
				it := intended[seq]
				failed := errs[i] != nil
				if failed && rng.Float64() >= c.failDelivered {
					continue
				}
				for g := range c.groups {
					at := it + 1 + rng.Int64N(2*gap) // often before the answer
					if rng.Float64() < c.reorder {
						at += rng.Int64N(50 * gap)
					}
					if st := stalls[g]; at >= st[0] && at < st[1] && (!c.stallOneShard || seq%2 == 0) {
						at = st[1] + (at-st[0])/4 // caught up in order, faster than sent
					}
					if at >= consumeEnd {
						if rng.Float64() < 0.9 {
							run.events = append(run.events, simEvent{at: total * 4, kind: evFound, producer: p, group: g, first: seq})
						}
						continue
					}
					if rng.Float64() < c.lose && !failed {
						continue
					}
					ev := simEvent{at: at, kind: evDeliver, producer: p, group: g, first: seq, intended: it}
					run.events = append(run.events, ev)
					if rng.Float64() < c.duplicate {
						ev.at += rng.Int64N(total / 4)
						run.events = append(run.events, ev)
					}
					if c.poison > 0 && seq%c.poison == 0 {
						for range 1 + rng.IntN(3) {
							ev.at += 1 + rng.Int64N(10*gap)
							run.events = append(run.events, ev)
						}
					}
					// A consumer crash shortly after the delivery: received but not yet
					// acknowledged to the engine, so redelivered after the restart.
					if j, ok := slices.BinarySearch(crashes, at); j < len(crashes) && !ok && crashes[j]-at < 20*gap && g == j%c.groups {
						ev.at = crashes[j] + 100*gap + (at - crashes[j])
						run.events = append(run.events, ev)
					}
				}
			}
		}
	}
	slices.SortStableFunc(run.events, func(a, b simEvent) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	for p := range run.intended {
		in := run.intended[p]
		for i := 0; i+retireChunk <= len(in); i++ {
			run.chunk = max(run.chunk, in[i+retireChunk-1]-in[i])
		}
	}
	return run
}

// play applies the run's events to a ledger, delivering through deliver.
func (run simRun) play(l marker, deliver func(group, shard, producer int, seq uint64, intended int64)) {
	for _, e := range run.events {
		switch e.kind {
		case evBatch:
			l.Batch(e.producer, e.first, e.n)
		case evAnswer:
			in := run.intended[e.producer][e.first : e.first+uint64(e.n)]
			l.SentBatch(e.producer, e.first, run.errs[[2]uint64{uint64(e.producer), e.first}], in, e.next)
		case evDeliver:
			deliver(e.group, int(e.first%2), e.producer, e.first, e.intended)
		case evFound:
			l.Found(e.group, e.producer, e.first)
		}
	}
}
