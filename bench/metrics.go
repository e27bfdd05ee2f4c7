package bench

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"qbench/results"
)

// Metrics is the live Prometheus view of the runs of one process (qbench run --metrics-addr):
// counters, gauges and latency histograms labelled by run, segment, engine, design and cell. It
// is a view: the figures are read from what the run already counts, once a second (the
// sampler's harvest) or at each scrape, and brought to the result's exact figures when the run
// ends. The result file stays the exact record.
//
// Nothing here touches the hot path but one atomic add per batch sent (the in-flight gauge): the
// counters reuse the run's own atomics and the ledger's, and the latency histograms are the
// sampler's per-second HDR histograms, merged into a running one per run and turned into a
// native (and classic) Prometheus histogram when scraped. Observing every message into a
// client_golang histogram instead would cost 45-70 ns per value, three values a message
// (BenchmarkMetricsCost): as much again as the HDR recording already made.
type Metrics struct {
	reg *prometheus.Registry

	sent, acked, failed, delivered, duplicates *prometheus.CounterVec
	lag, queued, lost, inFlight, warmup, done  *prometheus.GaugeVec
	trust                                      *prometheus.GaugeVec

	// Described here, made at each scrape (Collect).
	latencyDesc           [3]*prometheus.Desc
	faultActive, faultsFd *prometheus.Desc

	mu   sync.Mutex
	runs []*liveRun
}

// metricLabels are every series' labels, in this order.
var metricLabels = []string{"run", "segment", "engine", "design", "cell"}

// Latency histograms' buckets: classic ones for a server without native histograms (25 us
// doubling to 3.3 s, then 10 s), and the native schema: factor 2^(2^-3) ~ 1.09 between bucket
// bounds, client_golang's NativeHistogramBucketFactor 1.1.
var (
	classicBuckets = append(prometheus.ExponentialBuckets(25e-6, 2, 18), 10)
)

const (
	nativeSchema        = 3
	nativeZeroThreshold = prometheus.DefNativeHistogramZeroThreshold
)

// latencyNames are the histograms' names, by kind index (kinds).
var latencyNames = [3]struct{ name, help string }{
	{"qbench_produce_latency_seconds", "Produce latency (acknowledgement minus intended send time) of every acknowledged message, warm-up included."},
	{"qbench_send_delay_seconds", "Send delay (actual minus intended send time) of every message sent, warm-up included."},
	{"qbench_e2e_latency_seconds", "End-to-end latency (delivery minus intended send time) of every delivery of this run's messages, warm-up included."},
}

// NewMetrics makes an empty view with its own registry (Registry).
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, metricLabels)
		m.reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string, extra ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, append(append([]string{}, metricLabels...), extra...))
		m.reg.MustRegister(g)
		return g
	}
	m.sent = counter("qbench_sent_total", "Messages handed to the engine (answered or not yet).")
	m.acked = counter("qbench_acked_total", "Messages the engine acknowledged.")
	m.failed = counter("qbench_failed_total", "Messages whose send failed.")
	m.delivered = counter("qbench_delivered_total", "Distinct messages delivered at least once, summed over receiving groups (the result's ledger.delivered at the end).")
	m.duplicates = counter("qbench_duplicates_total", "Deliveries of a message its group had already received (poison retries left out).")
	m.lag = gauge("qbench_lag_messages", "Acknowledged messages not yet delivered, as the load generator sees them (the per-second lag; cut to what the engine holds after a destructive fault).")
	m.queued = gauge("qbench_queued_messages", "The engine's backlog plus pending while the run goes (when it reports one); at the end, the result's queued (found by the final sweep).")
	m.lost = gauge("qbench_lost_messages", "Acknowledged messages neither delivered nor held by the engine: set only at the end of a run whose loss is known (not a segment's).")
	m.inFlight = gauge("qbench_in_flight_messages", "Messages handed to the engine and not yet answered.")
	m.warmup = gauge("qbench_warmup", "1 while the run's warm-up lasts (its figures are outside the result's summary), else 0.")
	m.done = gauge("qbench_run_finished", "1 once the run has ended and the counters hold the result's exact figures.")
	m.trust = gauge("qbench_trust_flag", "1 for each trust flag the finished run's result carries (results.Assess), by its code and severity.", "code", "severity")
	for i, l := range latencyNames {
		m.latencyDesc[i] = prometheus.NewDesc(l.name, l.help, metricLabels, nil)
	}
	fl := append(append([]string{}, metricLabels...), "kind", "target")
	m.faultActive = prometheus.NewDesc("qbench_fault_active", "1 while a fault window of this kind on this target is open (scenario faults and marked ones), else 0.", fl, nil)
	m.faultsFd = prometheus.NewDesc("qbench_faults_total", "Fault windows opened, by kind and target.", fl, nil)
	m.reg.MustRegister(metricsCollector{m})
	return m
}

// Registry is what an HTTP handler exposes (promhttp.HandlerFor).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// liveRun is one run's part of the view.
type liveRun struct {
	m      *Metrics
	r      *run
	labels []string
	// sending counts messages handed to Send: the one figure the run did not already count.
	sending atomic.Int64

	// Written by the sampler's harvest only.
	acked, failed int64
	seen          struct{ sent, acked, failed, delivered, duplicates int64 }

	// mu guards the running histograms against a scrape.
	mu    sync.Mutex
	hists [3]*hdrhistogram.Histogram
	start time.Time
	// built are the histograms as last exposed, rebuilt at a scrape only when a harvest has
	// merged something since (a million values spread wide take ~5 ms to convert).
	built [3]prometheus.Metric
	fresh bool
	// finalFaults are the fault windows' counts once the run is over; nil until then. At the
	// end the view lets go of the run and of its HDR histograms (a sweep's cells would
	// otherwise each keep theirs, ledger included, as long as the process lives).
	finalFaults []faultCount
	// epoch is the run's schedule's time zero, once the first second is harvested: a scrape
	// reads the fault windows against it.
	epoch atomic.Pointer[time.Time]
}

// attach adds r to the view; nil when there is no view.
func (m *Metrics) attach(r *run) *liveRun {
	if m == nil {
		return nil
	}
	seg := ""
	if s := r.opts.Segment; s != nil {
		seg = segmentLabel(s.Index, s.Count)
	}
	l := &liveRun{m: m, r: r, labels: []string{r.opts.RunID, seg, r.sc.Engine, r.sc.Design, r.opts.Cell}, start: time.Now()}
	for i := range l.hists {
		l.hists[i] = results.NewHistogram()
	}
	m.warmup.WithLabelValues(l.labels...).Set(boolGauge(r.sc.Warmup > 0))
	m.done.WithLabelValues(l.labels...).Set(0)
	m.mu.Lock()
	m.runs = append(m.runs, l)
	m.mu.Unlock()
	return l
}

func segmentLabel(index, count int) string {
	return itoa(index) + "/" + itoa(count)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// noteSending counts n messages handed to the engine (produce.go, once per batch).
func (l *liveRun) noteSending(n int) {
	if l != nil {
		l.sending.Add(int64(n))
	}
}

// raise adds to c what total has grown by since seen (a counter never goes down: a figure
// the result later counts lower stays where it was).
func raise(c prometheus.Counter, seen *int64, total int64) {
	if total > *seen {
		c.Add(float64(total - *seen))
		*seen = total
	}
}

// interval takes one harvested second (sampler.go): the counters and gauges it closed, and its
// latency histograms.
func (l *liveRun) interval(s *sampler, iv *results.Interval) {
	if l == nil {
		return
	}
	m, lv := l.m, l.labels
	l.acked += iv.Acked
	l.failed += iv.Failed
	sent := max(l.sending.Load(), l.acked+l.failed) // read after the answers: never below them
	raise(m.sent.WithLabelValues(lv...), &l.seen.sent, sent)
	raise(m.acked.WithLabelValues(lv...), &l.seen.acked, l.acked)
	raise(m.failed.WithLabelValues(lv...), &l.seen.failed, l.failed)
	var deliveries, dups, poison int64
	for i := range l.r.consumerCounts {
		c := &l.r.consumerCounts[i]
		deliveries += c.deliveries.Load()
		dups += c.duplicates.Load()
		poison += c.poison.Load()
	}
	raise(m.delivered.WithLabelValues(lv...), &l.seen.delivered, deliveries-dups-poison)
	raise(m.duplicates.WithLabelValues(lv...), &l.seen.duplicates, dups)
	m.inFlight.WithLabelValues(lv...).Set(float64(sent - l.acked - l.failed))
	m.lag.WithLabelValues(lv...).Set(float64(iv.Lag))
	if iv.EngineLag != nil {
		m.queued.WithLabelValues(lv...).Set(float64(iv.EngineLag.Total()))
	}
	m.warmup.WithLabelValues(lv...).Set(boolGauge(s.lastStart < int64(l.r.sc.Warmup)))
	if l.epoch.Load() == nil {
		e := l.r.epoch // set before the sampler started
		l.epoch.Store(&e)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, k := range kinds {
		if s.merged[k].TotalCount() > 0 {
			l.hists[i].Merge(s.merged[k])
			l.fresh = false
		}
	}
}

// finish brings the counters to the result's exact figures and sets what only the end knows:
// queued, lost (when the run knows it), the trust flags.
func (l *liveRun) finish(res *results.Result) {
	if l == nil || res == nil {
		return
	}
	m, lv := l.m, l.labels
	t := res.Summary.Ledger
	raise(m.sent.WithLabelValues(lv...), &l.seen.sent, t.Sent)
	raise(m.acked.WithLabelValues(lv...), &l.seen.acked, t.Acked)
	raise(m.failed.WithLabelValues(lv...), &l.seen.failed, t.Failed)
	raise(m.delivered.WithLabelValues(lv...), &l.seen.delivered, t.Delivered)
	raise(m.duplicates.WithLabelValues(lv...), &l.seen.duplicates, t.Duplicates)
	m.inFlight.WithLabelValues(lv...).Set(0)
	m.warmup.WithLabelValues(lv...).Set(0)
	m.queued.WithLabelValues(lv...).Set(float64(t.Queued))
	if sc := l.r.sc; res.Segment == nil && sc.Produces() && sc.Consumes() {
		m.lost.WithLabelValues(lv...).Set(float64(t.Lost))
	}
	for _, f := range results.Assess(res).Flags {
		m.trust.WithLabelValues(append(append([]string{}, lv...), f.Code, string(f.Severity))...).Set(1)
	}
	faults := l.faultCounts(true)
	l.mu.Lock()
	for i, h := range l.hists {
		l.built[i], _ = latencyMetric(m.latencyDesc[i], h, l.start, l.labels)
		l.hists[i] = nil
	}
	l.fresh = true
	l.finalFaults = faults
	l.r = nil
	l.mu.Unlock()
	m.done.WithLabelValues(lv...).Set(1)
}

// metricsCollector makes, at each scrape, what is read from the runs rather than counted: the
// latency histograms and the fault windows.
type metricsCollector struct{ m *Metrics }

func (c metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.m.latencyDesc {
		ch <- d
	}
	ch <- c.m.faultActive
	ch <- c.m.faultsFd
}

func (c metricsCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	runs := append([]*liveRun(nil), c.m.runs...)
	c.m.mu.Unlock()
	for _, l := range runs {
		l.mu.Lock()
		if !l.fresh {
			for i, h := range l.hists {
				l.built[i], _ = latencyMetric(c.m.latencyDesc[i], h, l.start, l.labels)
			}
			l.fresh = true
		}
		for _, mt := range l.built {
			if mt != nil {
				ch <- mt
			}
		}
		l.collectFaults(ch)
		l.mu.Unlock()
	}
}

// collectFaults reports each kind and target's windows: how many opened, and whether one is
// open now. The scenario's faults name their target by the fault's own fields (the target an
// engine chose, "broker 2", is set while the fault runs and read only by the result).
// Called with l.mu held.
func (l *liveRun) collectFaults(ch chan<- prometheus.Metric) {
	final := l.finalFaults
	if final == nil {
		final = l.faultCounts(false)
	}
	for _, f := range final {
		lv := append(append([]string{}, l.labels...), f.kind, f.target)
		ch <- prometheus.MustNewConstMetric(l.m.faultActive, prometheus.GaugeValue, boolGauge(f.open), lv...)
		ch <- prometheus.MustNewConstMetric(l.m.faultsFd, prometheus.CounterValue, float64(f.fired), lv...)
	}
}

// faultCount is one kind and target's windows.
type faultCount struct {
	kind, target string
	fired        int
	open         bool
}

// faultCounts counts the run's windows by kind and target, in firing order; ended says the
// run is over (no window is open any more, a crash's that never recovered included).
func (l *liveRun) faultCounts(ended bool) []faultCount {
	epoch := l.epoch.Load()
	if epoch == nil {
		return []faultCount{}
	}
	now := int64(time.Since(*epoch))
	var out []faultCount
	at := map[[2]string]int{}
	for _, w := range l.r.activeWindows() {
		k := [2]string{string(w.fault.Kind), windowTarget(w)}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, faultCount{kind: k[0], target: k[1]})
		}
		out[i].fired++
		if !ended && w.startNs <= now && now < w.endNs.Load() {
			out[i].open = true
		}
	}
	if out == nil {
		out = []faultCount{}
	}
	return out
}

// windowTarget is what a window's label names as its target.
func windowTarget(w *faultWindow) string {
	if w.marked {
		return w.target // set when the mark made the window, never changed
	}
	f := w.fault
	switch {
	case !f.Kind.EngineSide():
		return "consumer " + itoa(f.Consumer)
	case f.Shard > 0:
		return "shard " + itoa(f.Shard)
	}
	return "server"
}

// latencyMetric is h (nanoseconds) as a Prometheus histogram in seconds with native buckets
// (schema 3) and the classic ones. Each HDR bucket is placed by its middle value: within the
// HDR histogram's 3 significant digits. The sum is the count times HDR's mean, to the same
// precision.
func latencyMetric(desc *prometheus.Desc, h *hdrhistogram.Histogram, start time.Time, labels []string) (prometheus.Metric, error) {
	count := uint64(h.TotalCount())
	positive := map[int]int64{}
	var zero uint64
	classic := make([]uint64, len(classicBuckets))
	if count > 0 {
		for _, b := range h.Distribution() {
			if b.Count == 0 {
				continue
			}
			v := float64(b.From+b.To) / 2 / 1e9
			if v <= nativeZeroThreshold {
				zero += uint64(b.Count)
			} else {
				positive[nativeIndex(v)] += b.Count
			}
			for i, ub := range classicBuckets {
				if v <= ub {
					classic[i] += uint64(b.Count)
					break
				}
			}
		}
	}
	sum := h.Mean() * float64(count) / 1e9
	native, err := prometheus.NewConstNativeHistogram(desc, count, sum, positive, nil, zero, nativeSchema, nativeZeroThreshold, start, labels...)
	if err != nil {
		return nil, err
	}
	buckets := make([]*dto.Bucket, len(classicBuckets))
	var cum uint64
	for i, ub := range classicBuckets {
		cum += classic[i]
		buckets[i] = &dto.Bucket{CumulativeCount: new(cum), UpperBound: new(ub)}
	}
	return bothHistogram{native, buckets}, nil
}

// nativeIndex is the native bucket holding v > 0 at nativeSchema: bucket i spans
// (2^((i-1)/8), 2^(i/8)].
func nativeIndex(v float64) int {
	return int(math.Ceil(math.Log2(v) * (1 << nativeSchema)))
}

// bothHistogram is a const native histogram with classic buckets added, as client_golang's own
// histograms expose both when given buckets and a NativeHistogramBucketFactor: a server that
// reads native histograms takes those, any other the classic buckets.
type bothHistogram struct {
	prometheus.Metric
	buckets []*dto.Bucket
}

func (b bothHistogram) Write(out *dto.Metric) error {
	if err := b.Metric.Write(out); err != nil {
		return err
	}
	n := out.Histogram // the const metric's own: not to be changed
	out.Histogram = &dto.Histogram{
		SampleCount: n.SampleCount, SampleSum: n.SampleSum, CreatedTimestamp: n.CreatedTimestamp,
		Schema: n.Schema, ZeroThreshold: n.ZeroThreshold, ZeroCount: n.ZeroCount,
		PositiveSpan: n.PositiveSpan, PositiveDelta: n.PositiveDelta,
		NegativeSpan: n.NegativeSpan, NegativeDelta: n.NegativeDelta,
		Bucket: b.buckets,
	}
	return nil
}
