package ledger

import (
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// The compact ledger's memory with a bounded backlog, driven directly (no engine, no network):
// four producers send batches of 16 in order, one group receives them a fixed backlog behind
// (about 500,000 messages, 5% of the 10 M case), 0.1% of deliveries late by up to 64 messages, 0.01%
// delivered twice; the Lossy cases also never deliver 0.01%, which the ledger must keep one by
// one to list them. Reported: the heap in use after a GC, at its peak over the run (sampled
// every 4 M messages) and per message sent, and (kept) how many messages the compact ledger held
// one by one before the consumers caught up. Run one at a time:
//
//	go test ./bench/ledger -run '^$' -bench 'BenchmarkCompactLedger(10M|100M)$' -benchtime=1x
//
// The 1 G cases run only with QBENCH_SOAK=1.
func BenchmarkCompactLedger10M(b *testing.B)       { benchLedger(b, 10_000_000, true, false) }
func BenchmarkCompactLedger100M(b *testing.B)      { benchLedger(b, 100_000_000, true, false) }
func BenchmarkCompactLedger1G(b *testing.B)        { soakOnly(b); benchLedger(b, 1_000_000_000, true, false) }
func BenchmarkCompactLedgerLossy10M(b *testing.B)  { benchLedger(b, 10_000_000, true, true) }
func BenchmarkCompactLedgerLossy100M(b *testing.B) { benchLedger(b, 100_000_000, true, true) }
func BenchmarkCompactLedgerLossy1G(b *testing.B) {
	soakOnly(b)
	benchLedger(b, 1_000_000_000, true, true)
}

func soakOnly(b *testing.B) {
	if os.Getenv("QBENCH_SOAK") != "1" {
		b.Skip("the 1 G message soak runs with QBENCH_SOAK=1")
	}
}

// The reference ledger on the 10 M case, for comparison (it keeps every message).
func BenchmarkReferenceLedger10M(b *testing.B) { benchLedger(b, 10_000_000, false, false) }

// benchMarker is what the benchmark drives.
type benchMarker interface {
	marker
	DeliveredTo(group, producer int, seq uint64) bool
	Close(maxLost int) (Totals, []LostMessage)
}

// newBenchLedger is a one-group ledger for producers: compact, or the reference.
func newBenchLedger(compact bool, producers int) benchMarker {
	if compact {
		return NewCompact(producers, 1)
	}
	return NewGroups(producers, 1)
}

func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func benchLedger(b *testing.B, n int, compact, lossy bool) {
	const producers, batch, backlog = 4, 16, 500_000
	// Each producer's consumer trails it by whole batches, so that every message is delivered.
	const behind = uint64(backlog/producers) / batch * batch
	for range b.N {
		base, l := heapInuse(), newBenchLedger(compact, producers)
		rng := rand.New(rand.NewPCG(1, 2))
		errs, intended := make([]error, batch), make([]int64, batch)
		type late struct {
			p   int
			seq uint64
			at  int
		}
		var pending []late // deliveries held back, by the message count they are due at
		deliver := func(p int, seq uint64) {
			r := rng.IntN(10_000)
			switch {
			case r < 1: // lost in the lossy cases
				if !lossy {
					l.DeliveredTo(0, p, seq)
				}
			case r < 11:
				pending = append(pending, late{p, seq, 1 + rng.IntN(64)})
			case r < 12:
				l.DeliveredTo(0, p, seq)
				l.DeliveredTo(0, p, seq)
			default:
				l.DeliveredTo(0, p, seq)
			}
		}
		var peak uint64
		sent := 0
		for seq := uint64(0); sent < n; seq += batch {
			for p := range producers {
				for i := range intended {
					intended[i] = int64(seq+uint64(i)) * 1000
				}
				l.Batch(p, seq, batch)
				l.SentBatch(p, seq, errs, intended, seq+batch)
			}
			sent += producers * batch
			if seq >= behind {
				for p := range producers {
					for i := range uint64(batch) {
						deliver(p, seq-behind+i)
					}
				}
			}
			kept := pending[:0]
			for _, d := range pending {
				if d.at -= producers * batch; d.at <= 0 {
					l.DeliveredTo(0, d.p, d.seq)
				} else {
					kept = append(kept, d)
				}
			}
			pending = kept
			if sent%(4<<20) == 0 {
				peak = max(peak, heapInuse()-min(base, heapInuse()))
			}
		}
		end := heapInuse() - min(base, heapInuse())
		peak = max(peak, end)
		var kept int64
		if c, ok := l.(*Compact); ok {
			kept = c.Kept()
		}
		// The consumers catch up: the backlog is delivered, and only the lossy 0.01% is lost.
		last := uint64(sent / producers)
		for p := range producers {
			for seq := last - min(last, behind); seq < last; seq++ {
				deliver(p, seq)
			}
		}
		for _, d := range pending {
			l.DeliveredTo(0, d.p, d.seq)
		}
		tot, _ := l.Close(0)
		b.ReportMetric(float64(peak), "peak-heap-B")
		b.ReportMetric(float64(end), "end-heap-B")
		b.ReportMetric(float64(peak)/float64(tot.Sent), "B/msg")
		b.ReportMetric(float64(tot.Lost), "lost")
		b.ReportMetric(float64(kept), "kept")
		runtime.KeepAlive(l)
	}
}
