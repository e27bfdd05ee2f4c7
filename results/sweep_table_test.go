package results_test

import (
	"regexp"
	"strings"
	"testing"

	"qbench/results"
)

// The matrix table shows each cell's bytes per second beside its messages per second when the
// cells' message sizes differ (one size is said under the table), and the acknowledged messages
// still queued at the end apart from those lost.
func TestIndexTableBytesAndQueued(t *testing.T) {
	r := &results.Result{RunID: "a"}
	r.Summary.ProduceRate, r.Summary.ProduceBytesRate = 2048, 2<<20
	r.Summary.Ledger.Queued, r.Summary.Ledger.Lost = 12, 3
	c := results.NewIndexCell("rate=2048", nil, "a.json", r)
	if c.ProduceBytesRate != 2<<20 || c.Queued != 12 {
		t.Fatalf("cell %+v: want 2 MiB/s and 12 queued", c)
	}
	small := &results.Result{RunID: "b"}
	small.Summary.ProduceRate, small.Summary.ProduceBytesRate = 100, 100*256
	var one strings.Builder
	if err := results.WriteIndexTable(&one, &results.Index{Cells: []results.IndexCell{c}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(one.String(), "bytes/s\t") || !strings.Contains(one.String(), "every cell's messages average 1.0 KiB") {
		t.Errorf("one message size: want no bytes/s column and the size said once:\n%s", one.String())
	}
	var b strings.Builder
	if err := results.WriteIndexTable(&b, &results.Index{Cells: []results.IndexCell{c, results.NewIndexCell("rate=100", nil, "b.json", small)}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	cols := regexp.MustCompile(`\s{2,}`) // tabwriter pads with two spaces or more
	head, row := cols.Split(lines[0], -1), cols.Split(lines[1], -1)
	col := func(name string) string {
		for i, h := range head {
			if h == name && i < len(row) {
				return row[i]
			}
		}
		t.Fatalf("no %s column:\n%s", name, b.String())
		return ""
	}
	if col("bytes/s") != "2.00 MiB/s" {
		t.Errorf("bytes/s %q, want 2.00 MiB/s:\n%s", col("bytes/s"), b.String())
	}
	if col("queued") != "12" || col("lost") != "3" {
		t.Errorf("queued %q lost %q, want 12 and 3:\n%s", col("queued"), col("lost"), b.String())
	}
}
