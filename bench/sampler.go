package bench

import (
	"context"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/engines"
	"qbench/results"
)

// sampler closes one interval a second: it harvests every recorder's histograms, reads the
// counters, asks the engine for its lag, and reports progress.
type sampler struct {
	r      *run
	merged map[string]*hdrhistogram.Histogram
	warm   map[string]*hdrhistogram.Histogram // the part of merged intended during warm-up
	series []results.Interval
	// bins is the latency bins of every recorder so far (results/bins.go).
	bins      *binStore
	lastStart int64
	// lagSamples are the sub-second lag readings taken while a fault is open (lagsample.go).
	lagSamples []results.LagSample
	// gone is how many messages the load generator counts as lag that the engine no longer
	// holds, from the engine's last reading after a destructive fault (see clampLag).
	gone int64
	// lagMu makes one engine lag reading at a time (the fast reader's and the harvest's).
	lagMu    sync.Mutex
	dropped  int64
	stopOnce sync.Once
	stopCh   chan struct{}

	// shardLags keeps each shard's largest lag (shards: N).
	shardLags shardLags

	// deliveriesMu guards taking the interval's delivery count and adding it to deliveries, so
	// that deliveriesSoFar never misses the count between the two.
	deliveriesMu sync.Mutex
	deliveries   int64

	// machPrev is the last per-second machine sample (machinesecond.go).
	machPrev machinePoint

	// streamSt is the streaming of the series to Options.Stream (stream.go).
	streamSt streamState
}

// deliveriesSoFar is every delivery since the run began, duplicates and every group included.
func (s *sampler) deliveriesSoFar() int64 {
	s.deliveriesMu.Lock()
	defer s.deliveriesMu.Unlock()
	return s.deliveries + s.r.deliveredN.Load()
}

// takeDeliveries ends the interval's delivery count.
func (s *sampler) takeDeliveries() int64 {
	s.deliveriesMu.Lock()
	defer s.deliveriesMu.Unlock()
	n := s.r.deliveredN.Swap(0)
	s.deliveries += n
	return n
}

// generatorLag is acked minus delivered as the load generator sees it; a run that is only one
// half (produce or consume) sees only one side, so it has none.
func generatorLag(r *run) int64 {
	if !(r.sc.Produces() && r.sc.Consumes()) {
		return 0
	}
	return max(0, r.ledger.Acked()-r.ledger.DeliveredUnique())
}

func newSampler(r *run) *sampler {
	s := &sampler{r: r, merged: map[string]*hdrhistogram.Histogram{}, warm: map[string]*hdrhistogram.Histogram{},
		bins: newBinStore(), stopCh: make(chan struct{})}
	for _, k := range kinds {
		s.merged[k] = results.NewHistogram()
		s.warm[k] = results.NewHistogram()
	}
	return s
}

func (s *sampler) stop() { s.stopOnce.Do(func() { close(s.stopCh) }) }

func (s *sampler) loop(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	// The fast ticker reads lag between the seconds while a fault is open: a backlog that
	// builds and drains within a second (a 1 s consumer pause) falls between two harvests.
	fast := time.NewTicker(lagSampleEvery)
	defer fast.Stop()
	var fl fastLag
	for {
		select {
		case <-tick.C:
			s.harvest(false)
		case <-fast.C:
			s.fastTick(&fl)
		case rd := <-fl.done:
			s.fastRead(&fl, rd)
		case <-s.stopCh:
			return
		case <-ctx.Done():
			return
		}
	}
}

// noLatencies says the interval just harvested recorded no latency. A message's ack is counted
// (ackedN) and its latency recorded (the producer's recorder) one after the other, so a harvest
// between the two puts the count in one interval and the value in the next: a final interval
// with no count may still hold values the summary has.
func (s *sampler) noLatencies() bool {
	for _, k := range kinds {
		if s.merged[k].TotalCount() > 0 || s.warm[k].TotalCount() > 0 {
			return false
		}
	}
	return true
}

// harvest closes the current interval. final marks the last, partial one, which is kept only if
// anything happened in it.
func (s *sampler) harvest(final bool) {
	r := s.r
	now := r.since()
	for _, k := range kinds {
		s.merged[k].Reset()
		s.warm[k].Reset()
	}
	for _, rec := range r.producerRecs {
		s.dropped += rec.harvest(s.merged, s.warm, s.bins.hot)
	}
	for _, rec := range r.consumerRecs {
		s.dropped += rec.harvest(s.merged, s.warm, s.bins.hot)
	}
	s.bins.settle()
	iv := results.Interval{
		StartNs:        s.lastStart,
		Warmup:         s.lastStart < int64(r.sc.Warmup),
		Acked:          r.ackedN.Swap(0),
		Failed:         r.failedN.Swap(0),
		Deliveries:     s.takeDeliveries(),
		AckedBytes:     r.ackedBytes.Swap(0),
		DeliveredBytes: r.deliveredBytes.Swap(0),
		Produce:        results.Summarise(s.merged[KindProduce]),
		SendDelay:      results.Summarise(s.merged[KindSendDelay]),
		E2E:            results.Summarise(s.merged[KindE2E]),
		Histograms:     map[string]string{},
	}
	s.lastStart = now
	if final && iv.Acked == 0 && iv.Deliveries == 0 && iv.Failed == 0 && s.noLatencies() {
		return
	}
	for _, k := range kinds {
		if s.merged[k].TotalCount() == 0 {
			continue
		}
		if enc, err := results.EncodeHistogram(s.merged[k]); err == nil {
			iv.Histograms[k] = enc
		}
		if s.warm[k].TotalCount() == 0 {
			continue
		}
		if enc, err := results.EncodeHistogram(s.warm[k]); err == nil {
			if iv.WarmupHistograms == nil {
				iv.WarmupHistograms = map[string]string{}
			}
			iv.WarmupHistograms[k] = enc
		}
	}
	if !final {
		var shards []engines.ShardLag
		iv.EngineLag, shards = s.engineLag()
		s.shardLags.note(shards)
	}
	iv.Machine = s.machineSecond()
	iv.Lag = s.clampLag(generatorLag(r), iv.EngineLag)
	iv.GroupLag = s.groupLags()
	if hr, ok := r.eng.(engines.HealthReporter); ok && !final {
		hctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		h, err := hr.Health(hctx)
		cancel()
		if err == nil {
			iv.Health = &results.EngineHealth{Counters: h.Counters, Status: h.Status}
			for _, e := range h.Events {
				iv.Health.Events = append(iv.Health.Events, results.LatencyEvent{Name: e.Name, LatestUnix: e.LatestUnix, LatestMs: e.LatestMs, MaxMs: e.MaxMs})
			}
		}
	}
	s.series = append(s.series, iv)
	r.live.interval(s, &iv)
	s.stream(iv, now)
	if r.opts.Progress != nil && !final {
		r.opts.Progress(Progress{
			Elapsed: time.Duration(now), Duration: r.sc.Duration.D(), Warmup: iv.Warmup,
			Rate: iv.Acked, ProduceP99: time.Duration(iv.Produce.P99), Lag: iv.Lag,
			Acked: r.ledger.Acked(),
		})
	}
}
