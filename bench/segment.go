package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"qbench/bench/ledger"
	"qbench/engines"
	"qbench/results"
	"qbench/scenarios"
)

// SegmentOptions make a run segment Index of Count of a run whose load comes from several
// processes at once, on several machines (k6's execution segments are the model). Each segment
// runs its share of the scenario's producers and consumers (Deal), under their own indices, so
// the segments together run exactly the scenario: producer p's schedule is its share of the total
// rate whichever process runs it. Every segment waits for StartAt, on the engine's clock where the
// engine has one (engines.Clock), and writes a partial result that qbench merge joins.
//
// Set-up and tear-down: every segment calls the engine's Setup, which is idempotent (a Redis
// stream group that exists, a Kafka topic that exists, are this run's), so no segment waits for
// another; no segment tears down, because another may still be draining or sweeping: the run's
// keys or topic are removed once all are done, by Teardown (qbench run --teardown-only).
type SegmentOptions struct {
	Index, Count int
	StartAt      time.Time
}

// ParseSegment reads "i/N" (0 <= i < N).
func ParseSegment(s string) (index, count int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		index, err = strconv.Atoi(a)
		if err == nil {
			count, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || count < 1 || index < 0 || index >= count {
		return 0, 0, fmt.Errorf("segment %q: want i/N with 0 <= i < N, e.g. 0/4", s)
	}
	return index, count, nil
}

// Deal is segment i of count's share of n things (producers or consumers): a contiguous span,
// the first n%count segments getting one more than the rest. 5 producers over 2 segments: 0-2 to
// segment 0, 3-4 to segment 1.
func Deal(n, i, count int) results.Span {
	base, rem := n/count, n%count
	k := base
	if i < rem {
		k++
	}
	return results.Span{First: i*base + min(i, rem), Count: k}
}

// SegmentRunID is the run ID every segment derives when none is given: from the scenario as run
// and the start instant, so that segments started with the same file and --start-at name the same
// keys and topic without being told.
func SegmentRunID(sc *scenarios.Scenario, startAt time.Time) string {
	h := fnv.New32a()
	raw, _ := json.Marshal(sc)
	h.Write(raw)
	slug := results.Slug(sc.Name)
	if len(slug) > 24 { // the ID is also a Kubernetes label value (qbench k8s): 63 at most
		slug = slug[:24]
	}
	return fmt.Sprintf("%s-%d-%08x", slug, startAt.UnixMilli(), h.Sum32())
}

// CheckSegment refuses a segmented run that cannot work: managed engines (a server qbench starts,
// the embedded one) belong to one process and cannot be shared by segments on other machines; a
// fault given to a segment the run does not have would never fire; a segment with nothing to run
// is a mistake.
func CheckSegment(sc *scenarios.Scenario, g SegmentOptions) error {
	if g.Count < 1 || g.Index < 0 || g.Index >= g.Count {
		return fmt.Errorf("segment %d/%d: want 0 <= i < N", g.Index, g.Count)
	}
	if g.StartAt.IsZero() {
		return errors.New("a segmented run needs a shared start time (--start-at)")
	}
	reg, err := engines.Lookup(sc.Engine)
	if err != nil {
		return err
	}
	if !reg.Shared && g.Count > 1 {
		var shared []string
		for _, r := range engines.All() {
			if r.Shared {
				shared = append(shared, r.Name)
			}
		}
		return fmt.Errorf("engine %s is started by qbench inside one process and cannot be shared by segments on other machines: use one the segments all connect to (%s)", sc.Engine, strings.Join(shared, ", "))
	}
	// An engine-side fault is fired once, by the segment it names; a consumer fault where its
	// consumer runs (faults.go, firesHere).
	if err := sc.CheckFaultSegments(g.Count); err != nil {
		return err
	}
	if err := sc.CheckReferenceLedger(); err != nil {
		return err // a segment keeps every message (its book joins the others')
	}
	if Deal(sc.Producers, g.Index, g.Count).Count == 0 && Deal(sc.Consumers, g.Index, g.Count).Count == 0 {
		return fmt.Errorf("segment %d/%d would run no producer and no consumer (the scenario has %d and %d): use fewer segments", g.Index, g.Count, sc.Producers, sc.Consumers)
	}
	return nil
}

// segmentRun is a run's segment state; nil in a run of one process.
type segmentRun struct {
	opts                 SegmentOptions
	producers, consumers results.Span
	clock                results.Clock
	offset               time.Duration // the engine's clock minus this machine's wall clock
	// quietSince is when the drain last saw the engine empty and no new delivery (unix ns).
	quietSince, lastDelivered atomic.Int64
}

// segmentSettle is how long a segment's drain waits with the engine reporting nothing left and
// no new delivery before it stops its consumers: the other segments' producers end at the same
// instant only to within their clocks' agreement and their own lateness.
const segmentSettle = 500 * time.Millisecond

// segmentOptions checks a segmented run's options and derives its run ID when none is given.
func segmentOptions(sc *scenarios.Scenario, opts *Options) error {
	if opts.Segment == nil {
		return nil
	}
	if err := CheckSegment(sc, *opts.Segment); err != nil {
		return err
	}
	if opts.RunID == "" {
		opts.RunID = SegmentRunID(sc, opts.Segment.StartAt)
	}
	return nil
}

// joinSegment makes r a segment, when its options say so: its share, and the other segments'
// producers marked remote in its ledger.
func (r *run) joinSegment() {
	g := r.opts.Segment
	if g == nil {
		return
	}
	sc := r.sc
	r.seg = &segmentRun{opts: *g, producers: Deal(sc.Producers, g.Index, g.Count), consumers: Deal(sc.Consumers, g.Index, g.Count)}
	for p := range sc.Producers {
		if !r.localProducer(p) {
			r.reference().SetRemote(p)
		}
	}
}

func in(s results.Span, i int) bool { return i >= s.First && i < s.First+s.Count }

// localProducer and localConsumer say whether this process runs producer or consumer i.
func (r *run) localProducer(i int) bool { return r.seg == nil || in(r.seg.producers, i) }
func (r *run) localConsumer(i int) bool { return r.seg == nil || in(r.seg.consumers, i) }

// stampShift converts this process's intended times (ns since its epoch, monotonic) to the ones
// stamps carry: in a segmented run, ns since the shared start instant on the engine's clock, so
// that a consumer on another machine measures end-to-end latency on the same clock. 0 otherwise.
func (r *run) stampShift() int64 {
	if r.seg == nil {
		return 0
	}
	return r.epoch.UnixNano() + int64(r.seg.offset) - r.seg.opts.StartAt.UnixNano()
}

// segmentStart estimates the clock offset and waits for the shared start instant on the engine's
// clock. A start that passed more than a second ago (set-up took too long) is refused: the
// segment would not run at the same time as the others.
func (r *run) segmentStart(ctx, stop context.Context) error {
	g := r.seg
	g.clock = estimateClock(ctx, r.eng)
	g.offset = time.Duration(g.clock.OffsetNs)
	if g.clock.Note != "" {
		r.opts.Logf("segment %d/%d: %s", g.opts.Index, g.opts.Count, g.clock.Note)
	}
	at := g.opts.StartAt.Add(-g.offset) // the start instant on this machine's clock
	wait := time.Until(at)
	if wait < -time.Second {
		return fmt.Errorf("segment %d/%d: the start time %s passed %s ago (on the engine's clock): the segments would not start together",
			g.opts.Index, g.opts.Count, g.opts.StartAt.UTC().Format(time.RFC3339Nano), (-wait).Round(time.Millisecond))
	}
	if wait > preciseSleepMax {
		t := time.NewTimer(wait - preciseSleepMax/2)
		defer t.Stop()
		select {
		case <-t.C:
		case <-stop.Done():
			return errors.New("stopped before the start time")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if d := time.Until(at); d > 0 {
		preciseSleep(d)
	}
	return nil
}

// segmentDrained is the drain condition of a segment: this process's ledger cannot tell when
// every message is in (other segments' consumers take some of its producers' messages, its own
// receive others'), so it waits until the engine reports nothing in its backlog or pending and no
// delivery arrived here for segmentSettle.
func (r *run) segmentDrained(ctx context.Context) bool {
	g := r.seg
	now := time.Now().UnixNano()
	if d := r.ledger.Received(); d != g.lastDelivered.Load() {
		g.lastDelivered.Store(d)
		g.quietSince.Store(now)
		return false
	}
	if lr, ok := r.eng.(engines.LagReporter); ok {
		lctx, cancel := context.WithTimeout(ctx, time.Second)
		lag, err := lr.Lag(lctx)
		cancel()
		if err == nil && lag.Backlog+lag.Pending > 0 {
			g.quietSince.Store(now)
			sleepCtx(ctx, 20*time.Millisecond)
			return false
		}
	}
	if g.quietSince.Load() == 0 {
		g.quietSince.Store(now)
	}
	return time.Duration(now-g.quietSince.Load()) >= segmentSettle
}

// segmentResult makes res a segment's partial result: its ledger book for the merge, its share
// and clock. Loss, queued and delivered-unacknowledged need every segment's marks, so the
// partial summary leaves them out rather than show a segment's half-view of them.
func (r *run) segmentResult(res *results.Result, err error) (*results.Result, error) {
	g := r.seg
	if err != nil || g == nil {
		return res, err
	}
	// When any segment may have fault windows (the scenario's faults, fired by whichever segment
	// they name; marks, taken with --marks-listen), the book carries the times the merge charges
	// every segment's costs to them by (segmentfaults.go in results), on the shared timeline:
	// a segment that fired nothing still pays for the windows the others fired.
	shift := r.stampShift()
	book, err := r.reference().Book(r.localProducer)
	if len(r.sc.Faults) > 0 || r.opts.Marks != nil || len(res.Faults) > 0 {
		book, err = r.reference().BookTimes(r.localProducer, shift)
	}
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(book)
	if err != nil {
		return nil, err
	}
	res.Segment = &results.Segment{Index: g.opts.Index, Count: g.opts.Count, StartAt: g.opts.StartAt.UTC(),
		Producers: g.producers, Consumers: g.consumers, Clock: g.clock, Ledger: raw, ShiftNs: shift}
	for _, s := range r.spans {
		res.Segment.Windows = append(res.Segment.Windows, results.ChargeSpan{StartNs: s.StartNs, EndNs: s.EndNs, Destructive: s.Destructive})
	}
	// A segment knows no loss (its ledger holds its share): the merge charges it over the union.
	for i := range res.Faults {
		res.Faults[i].Lost, res.Faults[i].LossWindowNs, res.Faults[i].LastDurableNs = 0, 0, -1
	}
	if len(res.Faults) > 0 && !slices.Contains(res.Summary.NotKnown, "faults.lost") {
		res.Summary.NotKnown = append(res.Summary.NotKnown, "faults.lost")
	}
	l := &res.Summary.Ledger
	l.Lost, l.Queued, l.DeliveredUnacked, l.Phantom = 0, 0, 0, 0
	res.Lost = nil
	if r.sc.Producers > 0 {
		res.Summary.OfferedRate *= float64(g.producers.Count) / float64(r.sc.Producers)
	}
	// The ledger's figures changed: the rules read them again, and any other warning stays.
	res.Summary.Warnings = append(results.Rewarn(res.Summary, res.Summary.Warnings),
		results.SegmentWarning(g.opts.Index, g.opts.Count, res.RunID))
	return res, nil
}

// JoinSegmentLedgers joins the segments' ledger books (results.LedgerJoin) into the run's
// ledger totals and its first lost messages.
func JoinSegmentLedgers(raws []json.RawMessage) (results.Ledger, []results.MessageID, error) {
	books := make([]ledger.Book, len(raws))
	for i, raw := range raws {
		if len(raw) == 0 {
			return results.Ledger{}, nil, fmt.Errorf("segment %d has no ledger book", i)
		}
		if err := json.Unmarshal(raw, &books[i]); err != nil {
			return results.Ledger{}, nil, fmt.Errorf("segment %d's ledger book: %w", i, err)
		}
	}
	l, err := ledger.Union(books)
	if err != nil {
		return results.Ledger{}, nil, err
	}
	totals, lost := l.Close(100)
	var ids []results.MessageID
	for _, m := range lost {
		ids = append(ids, results.MessageID{Group: m.Group, Producer: m.Producer, Seq: m.Seq})
	}
	return results.Ledger(totals), ids, nil
}

// Teardown removes what a run with this ID created on the engine (its keys, its topic): the
// tear-down of a segmented run, once every segment is done.
func Teardown(ctx context.Context, sc *scenarios.Scenario, runID string) error {
	reg, err := engines.Lookup(sc.Engine)
	if err != nil {
		return err
	}
	eng, err := reg.New(ctx, specFor(sc, runID))
	if err != nil {
		return fmt.Errorf("engine %s: %w", sc.Engine, err)
	}
	defer eng.Close()
	// Set-up first: it is idempotent, and some designs' tear-down stops what set-up started (the
	// reliable list's reaper).
	if err := eng.Setup(ctx); err != nil {
		return fmt.Errorf("engine %s: set-up: %w", sc.Engine, err)
	}
	return eng.Teardown(ctx)
}
