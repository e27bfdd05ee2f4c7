package plots

import (
	"fmt"
	"sort"
	"strings"

	"qbench/results"
)

// SLO is an absolute service-level objective the report holds every run to (qbench report
// --slo 'e2e.p99<=10ms', repeatable): it colours the grid and the decision table by met or
// missed, whatever the spread of the runs' latencies, and ranks the runs that meet every
// objective by what a message costs.
type SLO struct {
	Gates []results.Gate
}

// ParseSLOs reads --slo expressions: absolute gates only (a bound relative to a baseline is no
// objective).
func ParseSLOs(exprs []string) (SLO, error) {
	var s SLO
	for _, e := range exprs {
		g, err := results.ParseGate(e)
		if err != nil {
			return SLO{}, fmt.Errorf("--slo: %w", err)
		}
		if g.Relative {
			return SLO{}, fmt.Errorf("--slo %q: an objective needs an absolute bound (e.g. e2e.p99<=10ms), not one relative to a baseline", e)
		}
		g.Source = "slo"
		s.Gates = append(s.Gates, g)
	}
	return s, nil
}

// Set says whether any objective was given.
func (s SLO) Set() bool { return len(s.Gates) > 0 }

// String is the objectives as written, joined by " and ".
func (s SLO) String() string {
	var es []string
	for _, g := range s.Gates {
		es = append(es, g.Expr)
	}
	return strings.Join(es, " and ")
}

// Meets holds r to every objective; missed lists the ones it broke, with the value found.
func (s SLO) Meets(r *results.Result) (ok bool, missed []string) {
	for _, gr := range results.CheckGates(s.Gates, nil, r, results.GateOptions{}) {
		if !gr.Pass {
			missed = append(missed, gr.Describe())
		}
	}
	return len(missed) == 0, missed
}

// Cost is what one acknowledged message cost a run: the engine's own CPU (Engine.Stats
// proc_cpu_ns, a server qbench started) per message, or, without it, the load generator's
// CPU per message (which for an in-process engine includes the engine).
type Cost struct {
	NsPerMsg float64
	// Source is "engine" or "generator" ("" when neither was measured).
	Source string
}

func (c Cost) String() string {
	if c.Source == "" {
		return "—"
	}
	return results.FormatNs(int64(c.NsPerMsg)) + " " + c.Source
}

// costOf reads a run's cost per message.
func costOf(r *results.Result) Cost {
	s := r.Summary
	if v, ok := r.Engine.Stats[statCPUNs]; ok && s.Ledger.Acked > 0 {
		return Cost{NsPerMsg: float64(v) / float64(s.Ledger.Acked), Source: "engine"}
	}
	if s.Generator.CPUPerMessageNs > 0 {
		return Cost{NsPerMsg: s.Generator.CPUPerMessageNs, Source: "generator"}
	}
	return Cost{}
}

// Ranked is one run that met every objective, with its cost and verdict.
type Ranked struct {
	Label string
	Cost  Cost
	Trust results.Trust
}

// Rank orders the runs that meet every objective by cost per message, cheapest first (runs
// without a cost last, in input order).
func (s SLO) Rank(runs []Run) []Ranked {
	var out []Ranked
	for _, run := range runs {
		if ok, _ := s.Meets(run.Result); ok {
			out = append(out, Ranked{Label: run.Label, Cost: costOf(run.Result), Trust: trustOf(run.Result)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Cost, out[j].Cost
		if (a.Source == "") != (b.Source == "") {
			return b.Source == ""
		}
		return a.NsPerMsg < b.NsPerMsg
	})
	return out
}

// Capacity answers the capacity question for runs of one design at several offered rates (a
// matrix sweeping rate: labels that differ only in numbers, designKey): per design, the highest
// offered rate at which the run met every objective, and whether that run is flagged. Designs
// run at one rate are left out.
func (s SLO) Capacity(runs []Run) []string {
	type best struct {
		rate    float64
		flagged bool
		n       int
	}
	var order []string
	by := map[string]*best{}
	for _, run := range runs {
		r := run.Result
		if r.Summary.OfferedRate <= 0 || varyingRate(r) {
			continue
		}
		k := designKey(run.Label)
		b, ok := by[k]
		if !ok {
			b = &best{}
			by[k] = b
			order = append(order, k)
		}
		b.n++
		if ok, _ := s.Meets(r); ok && r.Summary.OfferedRate > b.rate {
			b.rate, b.flagged = r.Summary.OfferedRate, !trustOf(r).Trusted()
		}
	}
	var out []string
	for _, k := range order {
		b := by[k]
		switch {
		case b.n < 2:
			continue
		case b.rate == 0:
			out = append(out, k+": no rate met it")
		case b.flagged:
			out = append(out, fmt.Sprintf("%s: %.0f msg/s (%s flagged)", k, b.rate, WarnSign))
		default:
			out = append(out, fmt.Sprintf("%s: %.0f msg/s", k, b.rate))
		}
	}
	return out
}

// Verdict is the one sentence that answers "which is cheapest": the cheapest run meeting every
// objective, said to be flagged when it is (with the cheapest trusted one beside it), and
// whether the costs compared are the engine's or the generator's.
func (s SLO) Verdict(runs []Run) string {
	ranked := s.Rank(runs)
	if len(ranked) == 0 {
		return fmt.Sprintf("No run meets %s.", s)
	}
	best := ranked[0]
	if best.Cost.Source == "" {
		return fmt.Sprintf("%d of %d runs meet %s; none has a CPU cost measured, so none can be called cheapest.", len(ranked), len(runs), s)
	}
	out := fmt.Sprintf("Cheapest meeting %s: %s at %s CPU per message (%d of %d runs meet it)", s, best.Label, best.Cost, len(ranked), len(runs))
	if !best.Trust.Trusted() {
		out += fmt.Sprintf(", but it is %s flagged (%s): its figures may not describe the engine", WarnSign, suspectCodes(best.Trust))
		trusted := false
		for _, r := range ranked[1:] {
			if r.Trust.Trusted() && r.Cost.Source != "" {
				out += fmt.Sprintf("; the cheapest trusted run is %s at %s", r.Label, r.Cost)
				trusted = true
				break
			}
		}
		if !trusted {
			out += "; no trusted run meets it"
		}
	}
	sources := map[string]bool{}
	for _, r := range ranked {
		if r.Cost.Source != "" {
			sources[r.Cost.Source] = true
		}
	}
	if len(sources) > 1 {
		out += "; some costs are the engine's own CPU and some the load generator's, which do not compare like for like"
	}
	return out + "."
}
