package results_test

import (
	"strings"
	"testing"
	"time"

	"qbench/results"
)

// A sweep of fault scenarios shows produce errors and the write-unavailable time per cell: every
// engine fault's window plus its write back after, consumer faults, commands (writes go on
// during a rewrite or a snapshot), fork failures that refused no write and faults writes never
// came back from left out; a sweep without faults keeps its columns.
func TestIndexTableFaults(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	withFaults := &results.Result{RunID: "a", Faults: []results.FaultWindow{
		{Kind: "consumer-pause", Target: "consumer 0", StartNs: 0, EndNs: ms(5000), RecoverWriteNs: ms(1)},
		{Kind: "primary-kill", Target: "server", StartNs: ms(2000), EndNs: ms(4000), RecoverWriteNs: ms(300), ProduceErrors: 7},
		{Kind: "partition-leader-kill", Target: "broker 1", StartNs: ms(6000), EndNs: ms(7000), RecoverWriteNs: -1},
		// A BGSAVE's window is its snapshot's 600 ms, during which writes went on.
		{Kind: "command", Target: "server", StartNs: ms(7500), EndNs: ms(8100), RecoverWriteNs: ms(1)},
		// A fork failure under stop-writes-on-bgsave-error no: no write refused.
		{Kind: "fork-failure", Target: "server", StartNs: ms(9000), EndNs: ms(11500), RecoverWriteNs: ms(1)},
	}}
	withFaults.Summary.ProduceErrors = 7
	c := results.NewIndexCell("wait.replicas=1", nil, "a.json", withFaults)
	if c.ProduceErrors != 7 || c.WriteUnavailableNs != ms(2300) || !c.Faults {
		t.Fatalf("cell %+v: want 7 produce errors, 2.3 s unavailable", c)
	}
	var b strings.Builder
	if err := results.WriteIndexTable(&b, &results.Index{Cells: []results.IndexCell{c}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "write unavailable") || !strings.Contains(b.String(), "2.30s") {
		t.Errorf("table without the fault columns:\n%s", b.String())
	}
	b.Reset()
	plain := results.NewIndexCell("rate=1", nil, "b.json", &results.Result{RunID: "b"})
	if err := results.WriteIndexTable(&b, &results.Index{Cells: []results.IndexCell{plain}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "produce errors") {
		t.Errorf("a sweep without faults shows fault columns:\n%s", b.String())
	}
}

// A repeated cell shows its lost sum with the range a run lost; a cell run once, the count alone.
func TestIndexTableLostPerRun(t *testing.T) {
	rep := func(lost int64) results.Repetition {
		var r results.Repetition
		r.Summary.Ledger.Lost = lost
		return r
	}
	for _, c := range []struct {
		name string
		reps []results.Repetition
		lost int64
		want string
	}{
		{"repeated", []results.Repetition{rep(490), rep(530), rep(510)}, 1530, "1530 (490-530 a run)"},
		{"same each run", []results.Repetition{rep(0), rep(0)}, 0, "0 (0 a run)"},
		{"once", nil, 12, "  12  "},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &results.Result{RunID: "a", Repetitions: c.reps}
			r.Summary.Ledger.Lost = c.lost
			cell := results.NewIndexCell("acks=leader", nil, "a.json", r)
			if len(c.reps) > 1 && len(cell.LostPerRun) != len(c.reps) {
				t.Fatalf("lost per run %v, want one per repetition", cell.LostPerRun)
			}
			var b strings.Builder
			if err := results.WriteIndexTable(&b, &results.Index{Cells: []results.IndexCell{cell}}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), c.want) {
				t.Errorf("table without %q:\n%s", c.want, b.String())
			}
		})
	}
}
