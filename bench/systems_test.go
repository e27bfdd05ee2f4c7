package bench_test

import (
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"qbench/results"
	"qbench/scenarios"
)

// The systems side by side: one workload and one power cut per variant of the matrix's system
// axis; what each system's policy promises about acknowledged messages, by variant label. A
// variant without a promise here fails the test: every system in the table is asserted. The
// single-system power-loss scenarios with the same settings (server-, kafka-, jetstream-power-loss-*)
// are loaded, not run, by CI: these cells hold their promises.
var systemPromises = map[string]map[string]func(r *results.Result, cut results.FaultWindow) bool{
	"power-loss-across-systems": {
		"redis-stream-everysec":     lostUpTo(2.5), // about the last second, at most ~2 s
		"redis-stream-always":       lostNoneWritesBack,
		"kafka-acks-all":            lostSome, // what the page cache had not written back
		"kafka-flush-every-message": lostNoneWritesBack,
		"jetstream-default-sync":    lostSome, // fsync every 2 minutes: the backlog, and the stream
		"jetstream-sync-always":     lostNoneWritesBack,
		"rabbitmq-quorum":           lostNone,     // a node back from a power cut may take longer than the run to route again
		"rabbitmq-stream":           lostToTheCut, // confirmed before fsync: one node has no replica to fall back on
	},
}

// Every loss of the systems matrix is charged to its one power cut.
func lostSome(r *results.Result, cut results.FaultWindow) bool {
	return r.Summary.Ledger.Lost > 0 && cut.Lost == r.Summary.Ledger.Lost
}

// lostToTheCut: acknowledged messages lost, some of them charged to the cut (others may be
// charged to no window: lost after it).
func lostToTheCut(r *results.Result, cut results.FaultWindow) bool {
	return r.Summary.Ledger.Lost > 0 && cut.Lost > 0
}

func lostUpTo(seconds float64) func(*results.Result, results.FaultWindow) bool {
	return func(r *results.Result, cut results.FaultWindow) bool {
		return lostSome(r, cut) && float64(r.Summary.Ledger.Lost) <= seconds*r.Summary.OfferedRate
	}
}

// lostNone: nothing acknowledged lost, whether or not writes came back within the run.
func lostNone(r *results.Result, cut results.FaultWindow) bool {
	return r.Summary.Ledger.Lost == 0 && cut.Lost == 0
}

func lostNoneWritesBack(r *results.Result, cut results.FaultWindow) bool {
	return r.Summary.Ledger.Lost == 0 && cut.RecoverWriteNs >= 0
}

func runSystemsMatrix(t *testing.T, name string, sc *scenarios.Scenario) {
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	promises := systemPromises[name]
	tw := &strings.Builder{}
	w := tabwriter.NewWriter(tw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "system\tacked\tlost\tloss window\tproduce errors\ttrust")
	t.Cleanup(func() {
		w.Flush()
		t.Logf("acknowledged messages lost to a power cut, %s:\n%s", name, tw.String())
	})
	for _, c := range cells {
		cell, label := c.Scenario, c.Params[0].Value
		t.Run(c.Name, func(t *testing.T) {
			promise, ok := promises[label]
			if !ok {
				t.Fatalf("variant %s has no promise in systemPromises[%q]", label, name)
			}
			// Brokers (Kafka, RabbitMQ's Erlang nodes) are too heavy to share the machine: one
			// cell at a time.
			needTarget(t, cell.Engine)
			r := run(t, cell)
			f := faultOf(t, r, "power-loss")
			l := r.Summary.Ledger
			fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%d\t%s\n", label, l.Acked, l.Lost, results.FormatNs(f.LossWindowNs), r.Summary.ProduceErrors, results.Assess(r).Label())
			if f.Error != "" {
				t.Errorf("%s: the power cut failed: %s", label, f.Error)
			}
			if !promise(r, f) {
				t.Errorf("%s lost %d of %d acknowledged messages, against its policy's promise", label, l.Lost, l.Acked)
			}
		})
	}
}
