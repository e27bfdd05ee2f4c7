package plots_test

import (
	"strings"
	"testing"

	"qbench/plots"
	"qbench/results"
)

// A matrix whose cells have no p99 of a kind (a produce-only matrix has no end-to-end latency)
// still draws that kind's grid, every cell grey, and says so; gonum's heat map panicked on the
// empty range before, taking the whole report with it.
func TestGridWithoutAnyP99(t *testing.T) {
	ix := &results.Index{Kind: "matrix", Scenario: "produce-only"}
	for _, policy := range []string{"none", "aof-always"} {
		for _, rate := range []string{"1000", "2000"} {
			ix.Cells = append(ix.Cells, results.IndexCell{Name: "policy=" + policy + ",rate=" + rate, ProduceP99: 800e3,
				Params: []results.Param{{Key: "policy", Value: policy}, {Key: "rate", Value: rate}}})
		}
	}
	charts, err := plots.GridsFromIndex(ix)
	if err != nil || len(charts) != 2 {
		t.Fatalf("%d charts, %v", len(charts), err)
	}
	for _, c := range charts {
		if _, err := plots.Render(c, "svg"); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
	}
	if e2e := charts[1]; !strings.Contains(e2e.Plot.Title.Text, "no cell has one") {
		t.Errorf("e2e grid titled %q: want it to say no cell has a p99", e2e.Plot.Title.Text)
	}
}
