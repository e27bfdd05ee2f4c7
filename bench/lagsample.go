package bench

import (
	"context"
	"math"
	"time"

	"qbench/engines"
	"qbench/results"
)

// lagSampleEvery is how often lag is read while a fault is open, and lagSampleTail how long
// after its end: long enough to see the backlog a fault left drain.
const (
	lagSampleEvery = 100 * time.Millisecond
	lagSampleTail  = time.Second
)

// faultOpen says a fault window is open at ns, or closed less than lagSampleTail ago.
func (r *run) faultOpen(ns int64) bool {
	for _, w := range r.activeWindows() {
		if w.startNs <= ns && ns <= satAdd(w.endNs.Load(), int64(lagSampleTail)) {
			return true
		}
	}
	return false
}

// destructiveFired says a fault that can destroy messages has fired by ns.
func (r *run) destructiveFired(ns int64) bool {
	for _, w := range r.activeWindows() {
		if w.startNs <= ns && w.destructive() {
			return true
		}
	}
	return false
}

// satAdd is a+b, saturating at the largest int64 (an open crash window ends there).
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// engineLag asks the engine for its backlog; nil when it has no such report or did not answer.
func (s *sampler) engineLag() (*results.EngineLag, []engines.ShardLag) {
	lr, ok := s.r.eng.(engines.LagReporter)
	if !ok {
		return nil, nil
	}
	s.lagMu.Lock()
	defer s.lagMu.Unlock()
	lctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	lag, err := lr.Lag(lctx)
	cancel()
	if err != nil {
		return nil, nil
	}
	return &results.EngineLag{Backlog: lag.Backlog, Pending: lag.Pending, OldestPendingNs: lag.OldestPendingNs, Subscribers: lag.Subscribers}, lag.Shards
}

// clampLag is the load generator's lag without the messages that are gone. Acked minus
// delivered counts a message the engine destroyed as lag until the end; once a destructive fault
// has fired, the engine's backlog plus pending bounds what can still arrive, so a generator lag
// above it is cut to it, and the difference (gone) is remembered for the readings the engine
// does not answer (while it is down, and the last partial interval). Without a destructive fault
// the generator's own count stands: it is then never more than the engine holds, give or take
// the messages between the engine and the ledger.
func (s *sampler) clampLag(gen int64, eng *results.EngineLag) int64 {
	r := s.r
	if !r.destructiveFired(r.since()) {
		return gen
	}
	if eng != nil {
		s.gone = max(0, gen-eng.Total())
	}
	return max(0, gen-s.gone)
}

// fastLag is the sub-second reader's state, kept by the sampler's loop: the engine is asked on a
// goroutine of its own, because a reading can hang while the server is down (go-redis retries
// the dial until the restart), and the generator's lag must go on being sampled meanwhile.
type fastLag struct {
	asking bool
	done   chan fastReading
}

type fastReading struct {
	eng *results.EngineLag
	at  int64
}

// fastTick takes a sub-second reading while a fault is open: the engine's lag when no question
// to it is outstanding, else the generator's alone.
func (s *sampler) fastTick(fl *fastLag) {
	now := s.r.since()
	if !s.r.faultOpen(now) {
		return
	}
	if _, ok := s.r.eng.(engines.LagReporter); !ok || fl.asking {
		s.addSample(now, nil)
		return
	}
	if fl.done == nil {
		fl.done = make(chan fastReading, 1) // the reader never blocks, even after the loop ends
	}
	fl.asking = true
	go func() {
		eng, _ := s.engineLag()
		fl.done <- fastReading{eng, s.r.since()}
	}()
}

// fastRead records the engine's answer (nil: it did not answer) with the generator's lag then.
func (s *sampler) fastRead(fl *fastLag, rd fastReading) {
	fl.asking = false
	s.addSample(rd.at, rd.eng)
}

func (s *sampler) addSample(at int64, eng *results.EngineLag) {
	s.lagSamples = append(s.lagSamples, results.LagSample{AtNs: at, Lag: s.clampLag(generatorLag(s.r), eng), EngineLag: eng, GroupLag: s.groupLags()})
}
