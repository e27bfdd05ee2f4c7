package results

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"
)

// Faults in a run from several machines. The engine is shared, so an engine-side fault is fired
// once, by the segment the scenario names (a fault's segment:), a consumer fault by the segment
// that runs its consumer, and a mark by the segment it was sent to: each segment's result holds
// only the windows it fired, with their start and end. The merged result holds every segment's
// windows, on the first segment's timeline (the segments' epochs differ by their ShiftNs), and
// charges each the costs of all the segments, by the rules a run of one process charges by:
//   - lost and duplicated messages from the union of the segments' books, each charged by its
//     intended time (ledger.Charge: the first destructive window that ended at or after it, else
//     the first window that did), whichever segment sent or received it;
//   - failed sends of every segment, each charged by its intended time among the windows begun
//     when its answer came (a window fired by segment 0 is charged segment 1's failures in it);
//   - the lag peak from the merged per-second series (every segment's lag, added), or the firing
//     segment's own, the larger.
//
// The recovery times (first write and read after the window's end) are the firing segment's own
// producers' and consumers'.

// ChargeSpan is a fault window as the ledger charges it (bench/ledger.Window): its end may be
// later than the window's (a crashed consumer held messages until it died; a server that never
// came back charges everything after it).
type ChargeSpan struct {
	StartNs     int64 `json:"start_ns"`
	EndNs       int64 `json:"end_ns"`
	Destructive bool  `json:"destructive,omitempty"`
}

// FaultCost is what one window is charged over every segment.
type FaultCost struct {
	Lost, Duplicates, ProduceErrors int64
	// OldestLostNs and LastDurableNs are on the shared timeline; -1 when none.
	OldestLostNs, LastDurableNs int64
}

// FaultJoin charges the fault windows spans (on the run's shared timeline, sorted by start) over
// the union of the segments' ledger books (bench.CostSegmentFaults: results does not know the
// books' format). ok false: the books carry no intended times to charge by.
type FaultJoin func(books []json.RawMessage, spans []ChargeSpan) (costs []FaultCost, ok bool, err error)

// lagTail is how long after a window's end its lag peak is read, as the runner reads it.
const lagTail = int64(time.Second)

// segmentFaults sets out.Faults to every segment's windows, on the first segment's timeline, in
// order of their start, and charges them with cost over books. costed says the losses were
// charged over the union; false (cost nil, or books without times) leaves each window the firing
// segment's own costs and no loss.
func segmentFaults(out *Result, rs []*Result, books []json.RawMessage, cost FaultJoin) (costed bool, err error) {
	type row struct {
		w    FaultWindow
		span ChargeSpan // on the shared timeline
	}
	var rows []row
	base := rs[0].Segment.ShiftNs
	for _, r := range rs {
		g := r.Segment
		if len(g.Windows) != 0 && len(g.Windows) != len(r.Faults) {
			return false, fmt.Errorf("segment %d/%d has %d fault windows and %d charge spans", g.Index, g.Count, len(r.Faults), len(g.Windows))
		}
		for j, w := range r.Faults {
			idx := g.Index
			w.Segment = &idx
			span := ChargeSpan{StartNs: w.StartNs, EndNs: w.EndNs}
			if len(g.Windows) > 0 {
				span = g.Windows[j]
			}
			span.StartNs, span.EndNs = satAdd(span.StartNs, g.ShiftNs), satAdd(span.EndNs, g.ShiftNs)
			d := g.ShiftNs - base // onto the first segment's timeline
			w.StartNs, w.EndNs = satAdd(w.StartNs, d), satAdd(w.EndNs, d)
			// No segment knows a loss: its own ledger saw only its share.
			w.Lost, w.LossWindowNs, w.LastDurableNs = 0, 0, -1
			rows = append(rows, row{w, span})
		}
	}
	// The charge rule reads the windows in order of their start, as the runner fires them.
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].span.StartNs < rows[j].span.StartNs })
	out.Faults = nil
	spans := make([]ChargeSpan, len(rows))
	for i, r := range rows {
		out.Faults = append(out.Faults, r.w)
		spans[i] = r.span
	}
	if len(rows) == 0 || cost == nil {
		return false, nil
	}
	costs, ok, err := cost(books, spans)
	if err != nil || !ok {
		return false, err
	}
	for i := range out.Faults {
		w, c := &out.Faults[i], costs[i]
		w.Lost, w.Duplicates, w.ProduceErrors = c.Lost, c.Duplicates, c.ProduceErrors
		w.LossWindowNs, w.LastDurableNs = 0, -1
		if c.OldestLostNs >= 0 {
			w.LossWindowNs = max(0, spans[i].StartNs-c.OldestLostNs)
		}
		if c.LastDurableNs >= 0 {
			w.LastDurableNs = c.LastDurableNs - base
		}
		gen, eng := LagPeaks(out.Series, nil, w.StartNs, satAdd(w.EndNs, lagTail))
		w.LagPeak, w.EngineLagPeak = max(w.LagPeak, gen), max(w.EngineLagPeak, eng)
	}
	return true, nil
}

// satAdd adds without passing the largest int64, which stands for "never ended".
func satAdd(a, b int64) int64 {
	if a == math.MaxInt64 || (b > 0 && a > math.MaxInt64-b) {
		return math.MaxInt64
	}
	return a + b
}
