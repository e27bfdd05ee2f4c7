package plots_test

import (
	"bytes"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"qbench/plots"
	"qbench/results"
	"qbench/results/resultstest"
)

func fixtureRuns() []plots.Run {
	return []plots.Run{
		{Label: "stream", Result: resultstest.Make(resultstest.Options{Name: "q", Seed: 1, Seconds: 8, Warmup: 1,
			StallAt: 4 * time.Second, StallFor: 700 * time.Millisecond, Lost: 3})},
		{Label: "list", Result: resultstest.Make(resultstest.Options{Name: "q", Seed: 2, Seconds: 8, Warmup: 1,
			Rate: 600, ProduceMedian: 900 * time.Microsecond, Duplicates: 5})},
	}
}

// countColour counts the pixels of exactly colour c.
func countColour(img image.Image, c color.Color) int {
	r0, g0, b0, _ := c.RGBA()
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			if r>>8 == r0>>8 && g>>8 == g0>>8 && bb>>8 == b0>>8 {
				n++
			}
		}
	}
	return n
}

func TestChartsDrawTheirData(t *testing.T) {
	runs := fixtureRuns()
	charts, err := plots.All(runs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"spectrum-produce", "spectrum-send_delay", "spectrum-e2e", "latency-produce", "latency-send_delay", "latency-e2e", "throughput", "throughput-bytes", "lag", "loss"}
	if len(charts) != len(want) {
		t.Fatalf("%d charts, want %d", len(charts), len(want))
	}
	for i, c := range charts {
		if c.Name != want[i] {
			t.Fatalf("chart %d is %s, want %s", i, c.Name, want[i])
		}
		t.Run(c.Name, func(t *testing.T) {
			img := renderPNG(t, c)
			if got := img.Bounds().Size(); got != (image.Point{768, 432}) {
				t.Fatalf("size %v, want 768x432 (8 x 4.5 in at 96 dpi)", got)
			}
			if c.Name == "loss" {
				// The bars: lost (red) for the first run, duplicates (blue) for the second.
				for _, clr := range []color.Color{color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}} {
					if n := countColour(img, clr); n < 500 {
						t.Errorf("only %d pixels of bar colour %v", n, clr)
					}
				}
				return
			}
			// Both runs' lines are drawn: each colour covers more than the legend's swatch.
			for i := range runs {
				if n := countColour(img, plots.Colour(i)); n < 100 {
					t.Errorf("run %d: only %d pixels of its colour", i, n)
				}
			}
			svg := renderSVG(t, c)
			if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("stream")) {
				t.Errorf("svg lacks the chart or its legend")
			}
		})
	}
}

// The fault window is drawn in the stall's lane above the plot: the lag chart has pixels of the
// stall's opaque colour where the stall was, and none where the run without a fault is drawn
// alone.
func TestFaultWindowIsShaded(t *testing.T) {
	runs := fixtureRuns()
	faults, err := plots.Faults(runs[0].Result)
	if err != nil || len(faults) != 1 || faults[0].At != 4*time.Second || faults[0].Duration != 700*time.Millisecond || faults[0].Kind != "stall" {
		t.Fatalf("faults %+v %v", faults, err)
	}
	shadeOnWhite := func(img image.Image) int {
		c := plots.FaultKindColour("stall")
		return countColour(img, color.RGBA{R: c.R, G: c.G, B: c.B, A: 0xff})
	}
	for _, c := range []struct {
		runs   []plots.Run
		shaded bool
	}{{runs[:1], true}, {runs[1:], false}} {
		ch, err := plots.Lag(c.runs)
		if err != nil {
			t.Fatal(err)
		}
		img := renderPNG(t, ch)
		if n := shadeOnWhite(img); (n > 300) != c.shaded {
			t.Errorf("%s: %d shaded pixels, shaded=%v expected", c.runs[0].Label, n, c.shaded)
		}
	}
}

func TestNines(t *testing.T) {
	for p, want := range map[float64]float64{0: 0, 90: 1, 99: 2, 99.9: 3, 99.99: 4} {
		if got := plots.Nines(p); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("Nines(%v) = %v, want %v", p, got, want)
		}
	}
}

func TestEmptyResultStillPlots(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Seconds: 2})
	r.Histograms = map[string]string{}
	r.Series = nil
	r.Summary.Latency = map[string]results.Latency{}
	charts, err := plots.All([]plots.Run{{Label: "empty", Result: r}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := plots.Save(charts, dir, []string{"png", "svg"})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 20 {
		t.Fatalf("%d files", len(paths))
	}
	if _, err := os.Stat(filepath.Join(dir, "spectrum-e2e.svg")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(charts[0].Title, "no data") {
		t.Errorf("title %q", charts[0].Title)
	}
}

func TestCapacityCurve(t *testing.T) {
	pts := []plots.CapacityPoint{
		{Offered: 1000, Achieved: 1000, P50: 300e3, P99: 900e3, Pass: true},
		{Offered: 2000, Achieved: 2000, P50: 400e3, P99: 2e6, Pass: true},
		{Offered: 4000, Achieved: 3600, P50: 3e6, P99: 40e6, Pass: false},
		{Offered: 3000, Achieved: 2950, P50: 600e3, P99: 4e6, Pass: true},
	}
	c, err := plots.Capacity(pts, "produce", 5e6, 3000)
	if err != nil {
		t.Fatal(err)
	}
	img := renderPNG(t, c)
	if got := img.Bounds().Size(); got != (image.Point{768, 432}) {
		t.Fatalf("size %v", got)
	}
	for name, clr := range map[string]color.Color{
		"curve":        plots.Colour(0),
		"best rate":    color.RGBA{G: 0x80, A: 0xff},
		"missed point": color.RGBA{R: 0xc0, A: 0xff},
	} {
		if n := countColour(img, clr); n < 60 {
			t.Errorf("%s: %d pixels", name, n)
		}
	}
}

func TestPersistenceGrid(t *testing.T) {
	ix := &results.Index{Kind: "matrix", Scenario: "explore"}
	p99 := map[string]int64{"always": 8e6, "everysec": 900e3, "no": 700e3}
	for _, design := range []string{"stream", "list"} {
		for _, fsync := range []string{"always", "everysec", "no"} {
			c := results.IndexCell{Name: design + "," + fsync, Params: []results.Param{{Key: "design", Value: design}, {Key: "persistence.appendfsync", Value: fsync}},
				ProduceP99: p99[fsync], E2EP99: 2 * p99[fsync]}
			if fsync == "no" && design == "list" {
				c.Lost = 12
			}
			ix.Cells = append(ix.Cells, c)
		}
	}
	charts, err := plots.GridsFromIndex(ix)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 2 || charts[0].Name != "grid-produce" {
		t.Fatalf("%d charts", len(charts))
	}
	img := renderPNG(t, charts[0])
	// Six filled squares: no cell is left grey (the colour of a cell that did not run), and the
	// slowest (red end) and fastest (blue end) colours are both there.
	if n := countColour(img, color.RGBA{R: 0xee, G: 0xee, B: 0xee, A: 0xff}); n > 200 { // a few at the cells' anti-aliased edges
		t.Errorf("%d pixels of empty cells", n)
	}
	var reddish, bluish int
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			switch {
			case r > 150 && b < 80 && g < 80:
				reddish++
			case b > 150 && r < 100:
				bluish++
			}
		}
	}
	if reddish < 5000 || bluish < 5000 {
		t.Errorf("red %d, blue %d pixels: the grid is not coloured by latency", reddish, bluish)
	}
}
