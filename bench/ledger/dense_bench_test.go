package ledger

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// The dense form's memory, driven directly: four producers send batches of 16, and one group's
// consumers stop after the first tenth of the messages and come back only at the end, so that
// nine tenths of the run is outstanding at once (a consumer outage as long as the run). Each
// batch's answer carries the producer's next sequence number with up to three more batches
// claimed meanwhile (in flight), as the runner's does. Paced: each message's intended time is
// its producer's schedule (a fixed interval); the Max cases stamp a batch's messages with one
// time, the batches a jittered interval apart, as rate: max does. Reported: the heap in use
// after a GC at the outage's end, per outstanding message (B/outstanding), and the account once
// the consumers caught up (every message delivered, none lost). Run one at a time:
//
//	go test ./bench/ledger -run '^$' -bench 'BenchmarkDenseBacklog' -benchtime=1x
//
// The Reference case is the reference ledger on the 10 M case, for comparison.
func BenchmarkDenseBacklogPaced10M(b *testing.B)  { benchBacklog(b, 10_000_000, false, true) }
func BenchmarkDenseBacklogPaced100M(b *testing.B) { benchBacklog(b, 100_000_000, false, true) }
func BenchmarkDenseBacklogMax10M(b *testing.B)    { benchBacklog(b, 10_000_000, true, true) }
func BenchmarkDenseBacklogMax100M(b *testing.B)   { benchBacklog(b, 100_000_000, true, true) }
func BenchmarkDenseBacklogReference10M(b *testing.B) {
	benchBacklog(b, 10_000_000, false, false)
}

func benchBacklog(b *testing.B, n int, maxRate, compact bool) {
	const producers, batch = 4, 16
	per := uint64(n / producers / batch * batch)
	stopAt := per / 10 / batch * batch
	for range b.N {
		base, l := heapInuse(), newBenchLedger(compact, producers)
		rng := rand.New(rand.NewPCG(3, 4))
		errs, intended, clock := make([]error, batch), make([]int64, batch), make([]int64, producers)
		for seq := uint64(0); seq < per; seq += batch {
			for p := range producers {
				if maxRate {
					clock[p] += 8000 + rng.Int64N(16000)
				}
				for i := range intended {
					intended[i] = int64(seq+uint64(i)) * 1000
					if maxRate {
						intended[i] = clock[p]
					}
				}
				l.Batch(p, seq, batch)
				l.SentBatch(p, seq, errs, intended, seq+batch*uint64(1+rng.IntN(4)))
				if seq < stopAt {
					for i := range uint64(batch) {
						l.DeliveredTo(0, p, seq+i)
					}
				}
			}
		}
		outstanding := float64(producers) * float64(per-stopAt)
		heap := heapInuse() - min(base, heapInuse())
		var dense int64
		if c, ok := l.(*Compact); ok {
			dense = c.DenseBytes()
		}
		for p := range producers {
			for seq := stopAt; seq < per; seq++ {
				l.DeliveredTo(0, p, seq)
			}
		}
		tot, _ := l.Close(0)
		if tot.Lost != 0 || tot.Delivered != int64(producers*per) || tot.Queued != 0 {
			b.Fatalf("the account: %+v", tot)
		}
		b.ReportMetric(float64(heap), "heap-B")
		b.ReportMetric(float64(heap)/outstanding, "B/outstanding")
		b.ReportMetric(float64(dense)/outstanding, "dense-B/outstanding")
		b.ReportMetric(outstanding, "outstanding")
		runtime.KeepAlive(l)
	}
}
