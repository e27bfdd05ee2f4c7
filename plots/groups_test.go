package plots_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"qbench/plots"
	"qbench/results"
	"qbench/results/resultstest"
)

// groupRun is a two-group run whose group 1 falls behind from second 2 and catches up at the
// end, with sub-second samples around second 3.
func groupRun() *results.Result {
	r := resultstest.Make(resultstest.Options{Name: "groups", Seed: 1, Seconds: 6})
	r.Summary.Groups = 2
	for i := range r.Series {
		slow := int64(0)
		if i >= 2 && i < 5 {
			slow = int64(i-1) * 300
		}
		r.Series[i].GroupLag = []int64{2, slow}
	}
	r.LagSamples = nil
	for k := 0; k < 10; k++ {
		at := 3*time.Second + time.Duration(k)*100*time.Millisecond
		r.LagSamples = append(r.LagSamples, results.LagSample{AtNs: int64(at), GroupLag: []int64{1, 700 + int64(k)*30}})
	}
	r.Summary.PerGroup = []results.GroupLag{{Group: 0, Consumers: 1, Delivered: 6000, LagMax: 2}, {Group: 1, Consumers: 1, Delivered: 5100, LagMax: 970, LagEnd: 900}}
	zero, three := int64(0), int64(3)
	r.Summary.PerConsumer = []results.ConsumerShare{{Consumer: 0, Deliveries: 6000, Pending: &zero}, {Consumer: 1, Group: 1, Deliveries: 5100, Pending: &three}}
	return r
}

// The per-group chart is drawn when a run has several groups: one line per group, in time order
// with the sub-second samples among the per-second readings, each group in its own colour.
func TestGroupLagChart(t *testing.T) {
	r := groupRun()
	pts := plots.GroupLagPoints(r)
	if len(pts) != 2 {
		t.Fatalf("%d group lines", len(pts))
	}
	if n := len(r.Series) + len(r.LagSamples); len(pts[0]) != n || len(pts[1]) != n {
		t.Fatalf("points %d and %d, want %d each", len(pts[0]), len(pts[1]), n)
	}
	peak := 0.0
	for i, p := range pts[1] {
		if i > 0 && p.X < pts[1][i-1].X {
			t.Fatalf("group 1's points out of time order at %d: %v", i, pts[1])
		}
		peak = max(peak, p.Y)
	}
	if peak != 970 {
		t.Errorf("group 1 peaks at %v, want the sub-second 970", peak)
	}
	charts, err := plots.All([]plots.Run{{Label: "groups", Result: r}})
	if err != nil {
		t.Fatal(err)
	}
	var chart *plots.Chart
	for i := range charts {
		if charts[i].Name == "lag-per-group" {
			chart = &charts[i]
		}
	}
	if chart == nil {
		t.Fatal("no lag-per-group chart for a run with two groups")
	}
	img := renderPNG(t, *chart)
	for g := 0; g < 2; g++ {
		if n := countColour(img, plots.Colour(g)); n < 100 {
			t.Errorf("group %d's colour covers %d pixels", g, n)
		}
	}
	svg := renderSVG(t, *chart)
	if !bytes.Contains(svg, []byte("group 1")) || !bytes.Contains(svg, []byte("per group")) {
		t.Error("the chart's SVG lacks its title or the legend's group 1")
	}
	// A run with one group has no such chart.
	one, err := plots.All(fixtureRuns())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range one {
		if c.Name == "lag-per-group" {
			t.Error("a lag-per-group chart for runs with one group")
		}
	}
}

// The report carries the per-group table (the lagging group's lag at the end marked) and each
// consumer's pending at the end, n/a explained where the design keeps no record.
func TestReportShowsPerGroupAndPending(t *testing.T) {
	r := groupRun()
	other := resultstest.Make(resultstest.Options{Name: "list", Seed: 2, Seconds: 3})
	other.Summary.PerConsumer = []results.ConsumerShare{{Consumer: 0, Deliveries: 1500}, {Consumer: 1, Deliveries: 1500}}
	var out bytes.Buffer
	if err := plots.WriteReport(&out, []plots.Run{{Label: "stream", Result: r}, {Label: "list", Result: other}}, plots.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{"stream: per group", "<td>970</td>", `<td class="fail">900</td>`, "pending at end", "<td>3</td>", "<td>n/a</td>", "Pending n/a:", "lag over time, per group"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// The loss chart of runs that lost and duplicated nothing says so in its title (an empty axis
// reads as "no data"); with losses it writes each bar's value above it.
func TestLossChartSaysNoLossOrShowsValues(t *testing.T) {
	clean := resultstest.Make(resultstest.Options{Name: "q", Seed: 1, Seconds: 3})
	lossy := resultstest.Make(resultstest.Options{Name: "q", Seed: 2, Seconds: 3, Lost: 37, Duplicates: 12})
	for _, tc := range []struct {
		name      string
		runs      []plots.Run
		want, not []string
	}{
		{"none", []plots.Run{{Label: "a", Result: clean}, {Label: "b", Result: clean}}, []string{"no message lost or duplicated in any run"}, []string{">0<"}},
		{"some", []plots.Run{{Label: "a", Result: clean}, {Label: "b", Result: lossy}}, []string{">37<", ">12<", "lost and duplicated messages"}, []string{"no message lost"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := plots.Loss(tc.runs)
			if err != nil {
				t.Fatal(err)
			}
			svg := renderSVG(t, c)
			for _, w := range tc.want {
				if !bytes.Contains(svg, []byte(w)) {
					t.Errorf("the loss chart's SVG lacks %q", w)
				}
			}
			for _, n := range tc.not {
				if bytes.Contains(svg, []byte(n)) {
					t.Errorf("the loss chart's SVG has %q", n)
				}
			}
		})
	}
}

// Bytes per second have a panel of their own beside messages per second, on an axis in a unit
// that suits them: the fixture's 1,000 msg/s of 256 bytes is 250 KiB/s.
func TestThroughputBytesPanel(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Name: "q", Seed: 1, Seconds: 4})
	c, err := plots.ThroughputBytes([]plots.Run{{Label: "a", Result: r}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Plot.Y.Label.Text != "KiB/s" {
		t.Errorf("axis %q, want KiB/s", c.Plot.Y.Label.Text)
	}
	if c.Plot.Y.Max < 240 || c.Plot.Y.Max > 270 {
		t.Errorf("axis up to %v KiB/s, want about 250", c.Plot.Y.Max)
	}
	svg := renderSVG(t, c)
	if !bytes.Contains(svg, []byte("KiB/s")) || !bytes.Contains(svg, []byte("throughput in bytes")) {
		t.Error("the bytes panel's SVG lacks its unit or title")
	}
}
