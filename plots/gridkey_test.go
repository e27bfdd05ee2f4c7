package plots_test

import (
	"strings"
	"testing"
	"time"

	"qbench/plots"
)

// The persistence grid says what its colours mean (the p99 at each end of the scale) and marks
// each cell's spread across repetitions.
func TestGridHasAColourKeyAndSpread(t *testing.T) {
	ms := int64(time.Millisecond)
	c, err := plots.Grid("grid", "engine", "policy", []string{"redis", "server"}, []string{"none", "aof-always"}, []plots.GridCell{
		{Row: "redis", Col: "none", P99: ms, Spread: ms / 2}, {Row: "redis", Col: "aof-always", P99: 8 * ms},
		{Row: "server", Col: "none", P99: 2 * ms}, {Row: "server", Col: "aof-always", P99: 20 * ms, Lost: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Plot.X.Label.Text; !strings.Contains(got, "blue 1.00ms to red 20.00ms") {
		t.Errorf("x label %q has no colour key", got)
	}
	svg := renderSVG(t, c)
	for _, want := range []string{"range 500us", "lost 3"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("grid lacks %q", want)
		}
	}
}
