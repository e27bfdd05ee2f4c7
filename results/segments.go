package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// Segment marks a result as one segment i of N of a run whose load came from several processes
// at once (qbench run --segment i/N), as k6's execution segments split a test: the segment ran
// only its share of the producers and consumers, from the shared start instant, and its ledger
// book says which messages it sent and which it received, so that the merge can match a message
// produced in one segment and consumed in another.
type Segment struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is the shared start instant every segment waited for.
	StartAt time.Time `json:"start_at"`
	// Producers and Consumers are the scenario's producer and consumer indices this segment ran.
	Producers Span `json:"producers"`
	Consumers Span `json:"consumers"`
	// Clock is this segment's clock offset against the engine's clock.
	Clock Clock `json:"clock"`
	// Ledger is the segment's ledger book (bench/ledger.Book); qbench merge joins them. Empty in
	// a merged result's Segments.
	Ledger json.RawMessage `json:"ledger,omitempty"`
	// ShiftNs puts this segment's times (ns since its own epoch: its series, its fault windows)
	// on the run's shared timeline, ns since StartAt on the engine's clock: its epoch on the
	// engine's clock minus StartAt (a few milliseconds: set-up ends at the start instant).
	ShiftNs int64 `json:"shift_ns,omitempty"`
	// Windows are this segment's fault windows as its ledger charges them, one for each of the
	// result's Faults in order (segmentfaults.go): the merge charges every segment's costs to them.
	Windows []ChargeSpan `json:"windows,omitempty"`
}

// Span is a run of indices: First, First+1, ..., First+Count-1.
type Span struct {
	First int `json:"first"`
	Count int `json:"count"`
}

// Clock is a load generator's clock offset against the engine's clock, estimated NTP-style: the
// round trip with the least time gives the offset (engine time minus the midpoint of the local
// send and receive times) and its error bound (half that round trip, plus the engine clock's
// resolution). Stamps then carry intended times on the engine's clock, and end-to-end latency
// between two machines is off by at most the sum of their bounds.
type Clock struct {
	// Source is where the reference time came from ("redis TIME", "kafka LogAppendTime"), or "local" when the engine
	// has no clock to ask: the machine's own wall clock is used as it is.
	Source string `json:"source"`
	// OffsetNs is the engine's clock minus this machine's wall clock.
	OffsetNs int64 `json:"offset_ns"`
	// BoundNs bounds the error of OffsetNs; -1 when unknown (Source local).
	BoundNs int64 `json:"bound_ns"`
	// RTTNs is the least round trip; Samples the round trips made.
	RTTNs   int64 `json:"rtt_ns,omitempty"`
	Samples int   `json:"samples,omitempty"`
	// Note says why the offset was not estimated, when it was not.
	Note string `json:"note,omitempty"`
}

// ErrSegments is returned by MergeSegments for segments that do not make one run.
var ErrSegments = errors.New("segments do not belong together")

// LedgerJoin joins the segments' ledger books into the run's ledger (bench.JoinSegmentLedgers:
// results does not know the ledger's book format).
type LedgerJoin func(books []json.RawMessage) (Ledger, []MessageID, error)

// IsSegment reports whether any of rs is a segment's partial result.
func IsSegment(rs []*Result) bool {
	for _, r := range rs {
		if r.Segment != nil {
			return true
		}
	}
	return false
}

// CheckSegments refuses results that are not exactly the N segments of one run: each a segment,
// of one run ID, one scenario as run (seed included), one engine, one N and one start instant,
// every index from 0 to N-1 present once. It returns them ordered by index.
func CheckSegments(rs []*Result) ([]*Result, error) {
	out, missing, err := checkSegments(rs)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: run %s has %d segments; missing %s (qbench merge --allow-missing merges the others, marked partial)",
			ErrSegments, out[0].RunID, out[0].Segment.Count, joinInts(missing))
	}
	return out, nil
}

// checkSegments is CheckSegments that reports the missing indices instead of refusing them.
func checkSegments(rs []*Result) ([]*Result, []int, error) {
	if len(rs) == 0 {
		return nil, nil, fmt.Errorf("%w: nothing to merge", ErrSegments)
	}
	for i, r := range rs {
		if r.Segment == nil {
			return nil, nil, fmt.Errorf("%w: result %d (run %s) is not a segment (qbench run --segment); merge segments only with each other", ErrSegments, i+1, r.RunID)
		}
	}
	first := rs[0]
	n := first.Segment.Count
	seen := make([]int, n)
	for i, r := range rs {
		g := r.Segment
		switch {
		case r.RunID != first.RunID:
			return nil, nil, fmt.Errorf("%w: result %d is of run %s, result 1 of run %s", ErrSegments, i+1, r.RunID, first.RunID)
		case g.Count != n:
			return nil, nil, fmt.Errorf("%w: result %d is segment %d/%d, result 1 is of %d segments", ErrSegments, i+1, g.Index, g.Count, n)
		case !bytes.Equal(r.Scenario, first.Scenario):
			return nil, nil, fmt.Errorf("%w: result %d (segment %d/%d) ran a different scenario from result 1", ErrSegments, i+1, g.Index, g.Count)
		case r.Engine.Name != first.Engine.Name || r.Engine.Design != first.Engine.Design:
			return nil, nil, fmt.Errorf("%w: result %d ran %s/%s, result 1 %s/%s", ErrSegments, i+1, r.Engine.Name, r.Engine.Design, first.Engine.Name, first.Engine.Design)
		case !g.StartAt.Equal(first.Segment.StartAt):
			return nil, nil, fmt.Errorf("%w: result %d started at %s, result 1 at %s", ErrSegments, i+1, g.StartAt.Format(time.RFC3339Nano), first.Segment.StartAt.Format(time.RFC3339Nano))
		case g.Index < 0 || g.Index >= n:
			return nil, nil, fmt.Errorf("%w: result %d is segment %d of %d", ErrSegments, i+1, g.Index, n)
		}
		if seen[g.Index]++; seen[g.Index] > 1 {
			return nil, nil, fmt.Errorf("%w: segment %d/%d is given more than once", ErrSegments, g.Index, n)
		}
	}
	var missing []int
	for i, k := range seen {
		if k == 0 {
			missing = append(missing, i)
		}
	}
	out := append([]*Result(nil), rs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Segment.Index < out[j].Segment.Index })
	return out, missing, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// MergeSegments joins the N segments of one run into the run's result. Histograms add exactly
// and the series add second by second, as for machines (Merge); the ledger is not added up but
// joined over the union of the segments' books by join, so a message sent in one segment and
// received in another is delivered, once, and lost or queued is decided over all of them.
func MergeSegments(rs []*Result, join LedgerJoin) (*Result, error) {
	return MergeSegmentsCosted(rs, join, nil)
}

// MergeSegmentsCosted is MergeSegments that charges every segment's loss, duplicates and failed
// sends to every segment's fault windows with cost (bench.CostSegmentFaults); with cost nil the
// windows keep each segment's own costs, and their loss is not known (segmentfaults.go).
func MergeSegmentsCosted(rs []*Result, join LedgerJoin, cost FaultJoin) (*Result, error) {
	rs, err := CheckSegments(rs)
	if err != nil {
		return nil, err
	}
	return mergeSegments(rs, join, cost)
}

// mergeSegments merges segments CheckSegments (or checkSegments) ordered, joining their books
// with join and costing their fault windows with cost (nil: not costed over the union).
func mergeSegments(rs []*Result, join LedgerJoin, cost FaultJoin) (*Result, error) {
	out, err := Merge(rs, MergeOptions{Mode: MergeMachines})
	if err != nil {
		return nil, err
	}
	books := make([]json.RawMessage, len(rs))
	var bounds []int64
	for i, r := range rs {
		books[i] = r.Segment.Ledger
		g := *r.Segment
		g.Ledger, g.Windows = nil, nil // the windows are the merged result's faults
		out.Segments = append(out.Segments, g)
		bounds = append(bounds, g.Clock.BoundNs)
	}
	l, lost, err := join(books)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSegments, err)
	}
	out.RunID = rs[0].RunID
	out.Merged.Mode = MergeSegmentsMode
	out.Merged.Sources, out.Merged.Interrupted = out.Merged.Sources[:0], nil
	for _, r := range rs {
		name := fmt.Sprintf("%s segment %d/%d", r.RunID, r.Segment.Index, r.Segment.Count)
		out.Merged.Sources = append(out.Merged.Sources, name)
		if r.Interrupted {
			out.Merged.Interrupted = append(out.Merged.Interrupted, name)
		}
	}
	out.Merged.ClockBoundNs = e2eBound(bounds)
	out.Summary.Ledger = l
	out.Lost = lost
	// What each segment could not know, the joined ledger does.
	out.Summary.NotKnown = slices.DeleteFunc(out.Summary.NotKnown, func(f string) bool {
		return slices.Contains(SegmentNotKnown, f) || f == "faults.lost"
	})
	// Each segment fired its own windows; every one is charged over all segments.
	costed, err := segmentFaults(out, rs, books, cost)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSegments, err)
	}
	if len(out.Faults) > 0 && !costed {
		out.Summary.NotKnown = append(out.Summary.NotKnown, "faults.lost")
	}
	// The segments' own partial-result warnings are not the run's; the run's are read again,
	// and what the segments wrote of themselves (kept by Merge) stays.
	out.Summary.Warnings = Rewarn(out.Summary, out.Summary.Warnings)
	return out, nil
}

// MergeSegmentsMode is the Merged.Mode of a run joined from its segments.
const MergeSegmentsMode MergeMode = "segments"

// e2eBound is how far end-to-end latency between two segments can be off: a message's intended
// time is on its producer's estimate of the engine clock and its receipt on its consumer's, so the
// two largest bounds add. -1 when any segment's offset is unknown.
func e2eBound(bounds []int64) int64 {
	s := append([]int64(nil), bounds...)
	sort.Slice(s, func(i, j int) bool { return s[i] > s[j] })
	for _, b := range s {
		if b < 0 {
			return -1
		}
	}
	switch len(s) {
	case 0:
		return 0
	case 1:
		return 0 // one segment: one machine, one clock
	}
	return s[0] + s[1]
}

// SegmentNotKnown are the ledger fields a segment cannot know: a message it sent may be delivered
// (or delivered again) in another segment, so whether it is queued, lost or a duplicate is known
// only once qbench merge joins every segment's book.
var SegmentNotKnown = []string{"queued", "lost", "duplicates"}

// writeSegmentLedger prints a segment's messages line: what its own producers sent and its own
// consumers received, and "known after merge" for what only the merge can know.
func writeSegmentLedger(w io.Writer, r *Result) {
	l := r.Summary.Ledger
	fmt.Fprintf(w, "messages: sent %d, acked %d, failed %d, delivered %d (this segment's producers and consumers); queued, lost and duplicates known after merge (qbench merge of all %d segments)\n",
		l.Sent, l.Acked, l.Failed, l.Delivered, r.Segment.Count)
}

// PartialHeadline is the first line of a merged result's summary when a source was stopped early:
// how many messages were sent of about how many the schedule held (the offered rate over the
// scenario's duration, once per repetition), and which sources were interrupted; "" for a
// complete merge.
func PartialHeadline(r *Result) string {
	if r.Merged == nil || !r.Interrupted {
		return ""
	}
	who := "a source"
	if n := len(r.Merged.Interrupted); n > 0 {
		who = strings.Join(r.Merged.Interrupted, ", ")
	}
	sent := r.Summary.Ledger.Sent
	runs := 1.0 // machines and segments run the schedule once between them
	if r.Merged.Mode == MergeRepetitions {
		runs = float64(len(r.Merged.Sources))
	}
	if scheduled := runs * r.Summary.OfferedRate * scenarioDuration(r.Scenario).Seconds(); scheduled > 0 {
		return fmt.Sprintf("PARTIAL: %s of about %s scheduled sent; interrupted (%s stopped early): every figure covers what ran",
			commaInt(sent), commaInt(int64(scheduled+0.5)), who)
	}
	return fmt.Sprintf("PARTIAL: %s sent; interrupted (%s stopped early): every figure covers what ran", commaInt(sent), who)
}

// commaInt writes n with comma separators (12,000).
func commaInt(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// scenarioDuration reads a result's scenario duration ("5s", or nanoseconds); 0 when absent.
func scenarioDuration(sc json.RawMessage) time.Duration {
	var v struct {
		Duration json.RawMessage `json:"duration"`
	}
	if json.Unmarshal(sc, &v) != nil {
		return 0
	}
	var text string
	if json.Unmarshal(v.Duration, &text) == nil {
		d, _ := time.ParseDuration(text)
		return d
	}
	var ns int64
	_ = json.Unmarshal(v.Duration, &ns)
	return time.Duration(ns)
}
