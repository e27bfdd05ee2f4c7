package bench

import (
	"encoding/json"
	"os"
	"runtime"
	"time"

	"qbench/engines"
	"qbench/results"
)

// SeriesSink receives a run's series as it goes (Options.Stream): the header once, before the
// first interval, then each interval as the sampler closes it. Both are called from the sampler's
// goroutine: a sink that writes to disk should hand the work to its own goroutine, so that a
// slow disk does not hold the next second's harvest.
type SeriesSink interface {
	Begin(header *results.Result)
	Interval(iv results.Interval)
}

// SeriesKeeper is a SeriesSink that keeps every interval whole (in a file) when KeepsSeries says
// so: the run then holds no second of its series in memory once streamed, and its memory does
// not grow with its length. At the end it reads the series back without the histograms and
// engine health (SeriesBack) for the figures it computes there (faults, knee, lag peaks,
// offered, the summary's rates). The result's Series then lacks them: the sink's copy is the
// series, and the caller writes a result that references it.
type SeriesKeeper interface {
	SeriesSink
	KeepsSeries() bool
	// SeriesBack is every interval the sink was handed while it kept the series, once it has
	// them all, without histograms and health.
	SeriesBack() ([]results.Interval, error)
}

// streamState is the run's side of streaming: whether the header went out, and the producers'
// pacers, to fill each interval's offered count as it is streamed (the in-memory series gets
// its own at the end, fillOffered, from the same pure functions).
type streamState struct {
	begun  bool
	pacers []Pacer
	prev   int64 // offered before the last streamed interval's end
	onDisk int   // seconds the sink keeps and the run no longer holds
}

// stream hands one closed interval to the sink, the header first.
func (s *sampler) stream(iv results.Interval, end int64) {
	r := s.r
	sink := r.opts.Stream
	if sink == nil {
		return
	}
	st := &s.streamSt
	if !st.begun {
		st.begun = true
		if !r.sc.Rate.Max {
			shape := ShapeFor(r.sc)
			for id := 0; id < r.sc.Producers; id++ {
				st.pacers = append(st.pacers, producerPacer(r.sc, shape, id))
			}
			st.prev = st.offeredBefore(time.Duration(iv.StartNs))
		}
		sink.Begin(r.streamHeader())
	}
	if len(st.pacers) > 0 {
		cur := st.offeredBefore(time.Duration(end))
		iv.Offered, st.prev = cur-st.prev, cur
	}
	sink.Interval(iv)
	if k, ok := sink.(SeriesKeeper); ok && k.KeepsSeries() {
		// The sink holds the second; it is read back at the end (seriesBack).
		s.series[len(s.series)-1] = results.Interval{}
		s.series = s.series[:len(s.series)-1]
		st.onDisk++
	}
}

// seriesBack puts the seconds the sink kept back in front of those the run held (after the sink
// stopped keeping, if it did), without their histograms and health, for the figures computed at
// the end. Seconds the sink lost (its disk failed) are said in the log and left out.
func (s *sampler) seriesBack() {
	st := &s.streamSt
	if st.onDisk == 0 {
		return
	}
	k := s.r.opts.Stream.(SeriesKeeper)
	back, err := k.SeriesBack()
	if err != nil || len(back) != st.onDisk {
		s.r.opts.Logf("reading the streamed series back: %d of %d seconds (%v): the end-of-run figures leave the others out", len(back), st.onDisk, err)
	}
	s.series = append(back, s.series...)
	st.onDisk = 0
}

func (st *streamState) offeredBefore(t time.Duration) int64 {
	var n int64
	for _, p := range st.pacers {
		n += int64(p.CountBefore(t))
	}
	return n
}

// streamHeader is what a checkpoint knows before any figure: the run's identity, its scenario
// and the summary fields that do not come from the series.
func (r *run) streamHeader() *results.Result {
	scJSON, err := json.Marshal(r.sc)
	if err != nil {
		scJSON = []byte("{}") // a NaN the loader let through: the final result says which
	}
	host, _ := os.Hostname()
	h := &results.Result{
		SchemaVersion: results.SchemaVersion,
		Tool:          "qbench " + Version,
		RunID:         r.opts.RunID,
		StartedAt:     r.started.UTC(),
		Scenario:      scJSON,
		Machine:       results.Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version(), Hostname: host},
		Engine:        results.Engine{Name: r.sc.Engine, Design: r.sc.Design},
		Checkpoint:    &results.Checkpoint{DurationSeconds: r.sc.Duration.D().Seconds()},
	}
	h.Summary.OfferedRate = offeredRate(r.sc)
	h.Summary.Groups = max(r.groups, 1)
	h.Summary.Generator.InFlight = r.sc.InFlight
	if ip, ok := r.eng.(engines.InProcess); ok && ip.InProcess() {
		h.Summary.Generator.InProcessEngine = true
	}
	switch {
	case !r.sc.Consumes():
		h.Summary.Role = r.sc.Role
	case !r.sc.Produces():
		h.Summary.Role = r.sc.Role
	}
	return h
}
