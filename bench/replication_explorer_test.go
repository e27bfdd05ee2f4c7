package bench_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"qbench/results"
	"qbench/scenarios"
)

// The replication explorer: acknowledged writes lost, duplicates, produce errors and the time
// writes were unavailable per replication policy, across a primary or partition-leader kill
// whose replicas were held behind first (replicas_behind). Each promise sees the cell's
// parameters and one run's result; every run must see its fault fired, a failover and writes
// resume. The table gives each figure's min-max over the runs; the loss window is how long before
// the kill the oldest lost write was intended (0: every one during the fault, the hold included).
var replicationPromises = map[string]func(params map[string]string, r *results.Result) bool{
	"replication-explorer-cluster": func(p map[string]string, r *results.Result) bool {
		if p["redis.wait.replicas"] == "1" {
			return r.Summary.Ledger.Lost == 0 && r.Engine.Stats["wait_batches"] > 0 && r.Engine.Stats["wait_short"] > 0
		}
		// Asynchronous, with or without min-replicas-to-write (its 10 s lag outlasts the hold):
		// the writes acknowledged while the replicas were held are gone.
		return r.Summary.Ledger.Lost > 0
	},
	"replication-explorer-kafka": func(p map[string]string, r *results.Result) bool {
		if p["kafka.acks"] == "all" {
			return r.Summary.Ledger.Lost == 0
		}
		return r.Summary.Ledger.Lost > 0
	},
}

// replicationCI are the cells each explorer runs once in every test run: the policies at the
// two ends, which must differ. QBENCH_SOAK=1 runs every cell, repeat: times.
var replicationCI = map[string][]string{
	"replication-explorer-cluster": {"redis.wait.replicas=0,persistence.min-replicas-to-write=0", "redis.wait.replicas=1,persistence.min-replicas-to-write=1"},
	"replication-explorer-kafka":   {"kafka.acks=leader", "kafka.acks=all"},
}

// spread is the min-max of one figure over a cell's repetitions.
type spread struct{ lo, hi int64 }

func (s *spread) add(v int64, first bool) {
	if first || v < s.lo {
		s.lo = v
	}
	if first || v > s.hi {
		s.hi = v
	}
}

func (s spread) String() string {
	if s.lo == s.hi {
		return fmt.Sprint(s.lo)
	}
	return fmt.Sprintf("%d-%d", s.lo, s.hi)
}

func (s spread) ns() string {
	if s.lo == s.hi {
		return results.FormatNs(s.lo)
	}
	return results.FormatNs(s.lo) + "-" + results.FormatNs(s.hi)
}

func runReplicationMatrix(t *testing.T, name string, sc *scenarios.Scenario) {
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	soak := os.Getenv("QBENCH_SOAK") == "1"
	reps := 1
	if soak {
		reps = max(1, sc.Repeat)
	} else {
		ci := replicationCI[name]
		if len(ci) == 0 {
			t.Fatalf("%s has no CI cells in replicationCI", name)
		}
		for _, n := range ci {
			if !slices.ContainsFunc(cells, func(c scenarios.Cell) bool { return c.Name == n }) {
				t.Fatalf("replicationCI[%q] names %q, not a cell of it", name, n)
			}
		}
		cells = slices.DeleteFunc(cells, func(c scenarios.Cell) bool { return !slices.Contains(ci, c.Name) })
	}
	promise := replicationPromises[name]
	tw := &strings.Builder{}
	w := tabwriter.NewWriter(tw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "cell\truns\tacked\tlost\tcharged to the kill\tloss window\tduplicates\tproduce errors\twindow\twrite back after\twrite unavailable")
	began := time.Now()
	for _, c := range cells {
		cell, params := c.Scenario, map[string]string{}
		for _, p := range c.Params {
			params[p.Key] = p.Value
		}
		t.Run(c.Name, func(t *testing.T) {
			needTarget(t, cell.Engine)
			var acked, lost, charged, lossWindow, dups, perrs, window, back, unavailable spread
			for rep := range reps {
				r := run(t, cell)
				f := faultOf(t, r, string(cell.Faults[len(cell.Faults)-1].Kind))
				l := r.Summary.Ledger
				first := rep == 0
				acked.add(l.Acked, first)
				lost.add(l.Lost, first)
				charged.add(f.Lost, first)
				lossWindow.add(f.LossWindowNs, first)
				dups.add(l.Duplicates, first)
				perrs.add(f.ProduceErrors, first)
				window.add(f.EndNs-f.StartNs, first)
				back.add(f.RecoverWriteNs, first)
				unavailable.add(f.EndNs-f.StartNs+max(0, f.RecoverWriteNs), first)
				if f.Error != "" || f.RecoverWriteNs < 0 || l.Acked == 0 {
					t.Errorf("run %d: the fault did not fail over cleanly: error %q, write back after %s, acked %d", rep+1, f.Error, results.FormatNs(f.RecoverWriteNs), l.Acked)
				}
				if !promise(params, r) {
					t.Errorf("run %d: %s lost %d of %d acknowledged writes (stats %v)", rep+1, c.Name, l.Lost, l.Acked, r.Engine.Stats)
				}
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, reps, acked, lost, charged, lossWindow.ns(), dups, perrs,
				window.ns(), back.ns(), unavailable.ns())
		})
	}
	w.Flush()
	t.Logf("replication explorer, %s (min-max over the runs; %s in all):\n%s", name, time.Since(began).Round(time.Second), tw.String())
}
