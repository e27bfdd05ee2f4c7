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
// so: the run's in-memory series then drops each second's histograms and engine health once
// streamed (more than half of a second's size at 1,000 msg/s, more at higher rates: the tail's
// buckets; the health reading's counters). The
// result's Series then lacks them: the sink's copy is the series, and the caller writes a result
// that references it. The figures computed at the end (faults, knee, lag peaks, offered) read
// only what stays.
type SeriesKeeper interface {
	SeriesSink
	KeepsSeries() bool
}

// streamState is the run's side of streaming: whether the header went out, and the producers'
// pacers, to fill each interval's offered count as it is streamed (the in-memory series gets
// its own at the end, fillOffered, from the same pure functions).
type streamState struct {
	begun  bool
	pacers []Pacer
	prev   int64 // offered before the last streamed interval's end
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
		// The sink holds its own copy of the maps' references. What stays (about 400 bytes a
		// second, 35 MB a day) is what the figures computed at the end read.
		last := &s.series[len(s.series)-1]
		last.Histograms, last.WarmupHistograms, last.Health = nil, nil, nil
	}
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
