package bench

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"qbench/scenarios"
)

// External fault marks: a fault that something other than qbench injected (a chaos tool, an
// operator), marked while the run is under way so that its window is costed exactly as the
// runner's own faults are. A mark's start opens a window in the run's list of fault windows, the
// same list the runner's faults join, so every send that fails while it is the latest window
// begun, every loss and duplicate the ledger charges to it, the first write and read after its
// end and its lag peak are counted by the same code. The times are qbench's own clock at the
// moment each mark arrives: a chaos tool on another machine has no clock to skew.

// MarkKind is what an external fault was and whether it can destroy messages.
type MarkKind struct {
	Name string
	// Destructive kinds can destroy acknowledged messages (a killed pod, a partition): a lost
	// message is charged to the first destructive window that ended after it was intended.
	Destructive bool
	Meaning     string
}

// MarkKinds are the kinds a mark may name: the engine-side kinds of qbench's own faults (an
// operator who crashed the server by hand marks a server-crash) and what chaos tools inject.
// Consumer-side kinds are not among them: qbench's consumers are its own.
var MarkKinds = func() []MarkKind {
	var out []MarkKind
	for _, k := range scenarios.FaultKinds {
		t, _ := k.Traits()
		if t.ConsumerSide {
			continue
		}
		out = append(out, MarkKind{Name: string(k), Destructive: t.Destructive, Meaning: "as qbench's own " + string(k) + " fault"})
	}
	return append(out,
		MarkKind{"pod-kill", true, "a pod or container of the system killed (Chaos Mesh PodChaos pod-kill, Litmus pod-delete)"},
		MarkKind{"pod-failure", true, "a pod made unavailable for a while (Chaos Mesh PodChaos pod-failure)"},
		MarkKind{"network-partition", true, "nodes cut off from each other or from clients (NetworkChaos partition)"},
		MarkKind{"network-loss", true, "packets dropped (NetworkChaos loss, Litmus pod-network-loss)"},
		MarkKind{"network-delay", false, "packets delayed (NetworkChaos delay, Litmus pod-network-latency)"},
		MarkKind{"io-fault", true, "file system calls failing (IOChaos fault)"},
		MarkKind{"io-delay", false, "file system calls delayed (IOChaos latency)"},
		MarkKind{"clock-skew", false, "a node's clock moved (TimeChaos)"},
		MarkKind{"cpu-stress", false, "CPU taken from the system (StressChaos cpu, Litmus pod-cpu-hog)"},
		MarkKind{"memory-stress", false, "memory taken from the system (StressChaos memory)"},
		MarkKind{"other", true, "anything else (counted as destructive: a loss in it is charged to it)"},
	)
}()

// markKind returns the kind named, and false for one that is not a mark kind.
func markKind(name string) (MarkKind, bool) {
	for _, k := range MarkKinds {
		if k.Name == name {
			return k, true
		}
	}
	return MarkKind{}, false
}

// MarkKindList names every mark kind, for errors and help.
func MarkKindList() string {
	names := make([]string, len(MarkKinds))
	for i, k := range MarkKinds {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// Mark is one end of an external fault: its kind, what it hit, and whether it starts or ends.
type Mark struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// Action is "start" or "end".
	Action string `json:"action"`
}

// Validate checks a mark on its own (not against a run): a known kind, a target, an action.
// Errors name the field.
func (m Mark) Validate() error {
	var errs []error
	if _, ok := markKind(m.Kind); !ok {
		if m.Kind == "" {
			errs = append(errs, errors.New("kind: missing (one of "+MarkKindList()+")"))
		} else {
			errs = append(errs, fmt.Errorf("kind: unknown fault kind %q (one of %s)", m.Kind, MarkKindList()))
		}
	}
	if strings.TrimSpace(m.Target) == "" {
		errs = append(errs, errors.New("target: missing (what the fault hit: a node, a pod, a broker)"))
	} else if len(m.Target) > 200 {
		errs = append(errs, fmt.Errorf("target: %d characters, more than 200", len(m.Target)))
	}
	if m.Action != "start" && m.Action != "end" {
		errs = append(errs, fmt.Errorf("action: %q, want start or end", m.Action))
	}
	return errors.Join(errs...)
}

// ErrMarkConflict wraps a well-formed mark that the run's state refuses: no run under way, a
// start of a fault already open, an end of one never started.
var ErrMarkConflict = errors.New("mark refused")

// MarkReceipt is what recording a mark did: the run it went to and when, since the run's epoch.
type MarkReceipt struct {
	RunID string `json:"run_id"`
	AtNs  int64  `json:"at_ns"`
	// Window is the fault window's index in the result's faults.
	Window int `json:"window"`
}

// MarkBoard takes external fault marks for whichever run is under way: Options.Marks. Runs open
// it when their load begins (the epoch) and close it when their consumers have stopped, so a
// mark outside that span is refused rather than charged to nothing. A sweep's runs use it in
// turn. Safe for concurrent use.
type MarkBoard struct {
	mu   sync.Mutex
	run  *run
	last string // the run ID of the last run closed, for errors
	open map[[2]string]*faultWindow
}

// NewMarkBoard returns a board no run has opened yet.
func NewMarkBoard() *MarkBoard { return &MarkBoard{} }

// Record applies a mark to the run under way. A malformed mark is an error as Validate says; a
// well-formed one the run's state refuses wraps ErrMarkConflict.
func (b *MarkBoard) Record(m Mark) (MarkReceipt, error) {
	if err := m.Validate(); err != nil {
		return MarkReceipt{}, err
	}
	kind, _ := markKind(m.Kind)
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.run
	if r == nil {
		why := "no run's load has begun yet (marks count from the producers' start)"
		if b.last != "" {
			why = "run " + b.last + "'s load is over (its consumers have stopped) and no other has begun"
		}
		return MarkReceipt{}, fmt.Errorf("%w: %s %s on %s: outside the run: %s", ErrMarkConflict, m.Kind, m.Action, m.Target, why)
	}
	key := [2]string{m.Kind, m.Target}
	now := r.since()
	if m.Action == "start" {
		if w := b.open[key]; w != nil {
			return MarkReceipt{}, fmt.Errorf("%w: %s on %s: already started at %s and not ended", ErrMarkConflict, m.Kind, m.Target, fmtOffset(w.startNs))
		}
		w := &faultWindow{fault: scenarios.Fault{Kind: scenarios.FaultKind(m.Kind)}, startNs: now, marked: true,
			markDestructive: kind.Destructive, target: m.Target}
		w.endNs.Store(math.MaxInt64) // until its end is marked
		r.windowsMu.Lock()
		r.windows = append(r.windows, w)
		idx := len(r.windows) - 1
		r.windowsMu.Unlock()
		b.open[key] = w
		r.opts.Logf("marked: %s on %s started at %s", m.Kind, m.Target, fmtOffset(now))
		return MarkReceipt{RunID: r.opts.RunID, AtNs: now, Window: idx}, nil
	}
	w := b.open[key]
	if w == nil {
		return MarkReceipt{}, fmt.Errorf("%w: %s on %s: an end with no start in this run (mark its start first)%s", ErrMarkConflict, m.Kind, m.Target, b.openList())
	}
	delete(b.open, key)
	w.endNs.Store(now)
	r.opts.Logf("marked: %s on %s ended at %s", m.Kind, m.Target, fmtOffset(now))
	return MarkReceipt{RunID: r.opts.RunID, AtNs: now, Window: r.windowIndex(w)}, nil
}

// openList names the marks still open, for an error about a mismatched end.
func (b *MarkBoard) openList() string {
	if len(b.open) == 0 {
		return ""
	}
	var names []string
	for k := range b.open {
		names = append(names, k[0]+" on "+k[1])
	}
	sort.Strings(names)
	return "; open now: " + strings.Join(names, ", ")
}

// begin makes r the run marks go to; called at the run's epoch. A nil board does nothing.
func (b *MarkBoard) begin(r *run) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.run, b.open = r, map[[2]string]*faultWindow{}
}

// end stops taking marks for r: a window still open never ended in the run (its end stays the
// largest int64, "did not end"), as a runner's fault that outlives the run.
func (b *MarkBoard) end(r *run) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.run != r {
		return
	}
	for k := range b.open {
		r.opts.Logf("marked: %s on %s was never ended: its window stays open to the run's end", k[0], k[1])
	}
	b.run, b.open, b.last = nil, nil, r.opts.RunID
}

// windowIndex is w's index among the run's windows.
func (r *run) windowIndex(w *faultWindow) int {
	for i, x := range r.activeWindows() {
		if x == w {
			return i
		}
	}
	return -1
}

// fmtOffset prints a time since the epoch.
func fmtOffset(ns int64) string {
	return fmt.Sprintf("%.3fs", float64(ns)/1e9)
}
