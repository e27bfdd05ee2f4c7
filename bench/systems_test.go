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
// variant without a promise here fails the test: every system in the table is asserted.
var systemPromises = map[string]map[string]func(r *results.Result) bool{
	"power-loss-across-systems": {
		"redis-stream-everysec":     func(r *results.Result) bool { return r.Summary.Ledger.Lost <= 5*int64(r.Summary.OfferedRate)/2 },
		"redis-stream-always":       lostNone,
		"kafka-acks-all":            func(*results.Result) bool { return true }, // the page cache: whatever was not written back
		"kafka-flush-every-message": lostNone,
		"jetstream-default-sync":    func(r *results.Result) bool { return r.Summary.Ledger.Lost > 0 },
		"jetstream-sync-always":     lostNone,
		"rabbitmq-quorum":           lostNone,
	},
}

func lostNone(r *results.Result) bool { return r.Summary.Ledger.Lost == 0 }

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
			if !promise(r) {
				t.Errorf("%s lost %d of %d acknowledged messages, against its policy's promise", label, l.Lost, l.Acked)
			}
		})
	}
}
