package plots_test

import (
	"strings"
	"testing"
	"time"

	"qbench/plots"
	"qbench/results"
)

// longRun is a synthetic run of n seconds at 1,000 msg/s with a lag peak of 5,000 in one second
// (no real run: only the series the time charts draw).
func longRun(n int, peakAt int) *results.Result {
	r := &results.Result{SchemaVersion: results.SchemaVersion, RunID: "soak"}
	r.Summary.MeasuredSeconds = float64(n)
	r.Summary.Groups = 1
	r.Series = make([]results.Interval, n)
	for i := range r.Series {
		r.Series[i] = results.Interval{StartNs: int64(i) * int64(time.Second), Acked: 1000, Deliveries: 1000, Lag: 10,
			SendDelay: results.Latency{Count: 1000, P50: 1e5, P99: 1e6, Max: 2e6}}
	}
	r.Series[peakAt].Lag = 5000
	return r
}

// A 6 h run's time charts draw a bounded number of points (a minute a point, not a second) with
// the rate still right and the lag's peak kept, on an axis labelled in hours; a 10 min run keeps
// every second and its axis in seconds.
func TestLongRunTimeAxes(t *testing.T) {
	cases := []struct {
		name      string
		seconds   int
		maxPoints int
		unit      string // axis label and tick suffix
	}{
		{"6h", 6 * 3600, 400, "hours"},
		{"10m", 600, 600, "seconds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := []plots.Run{{Label: "soak", Result: longRun(c.seconds, c.seconds/2)}}
			tp, err := plots.Throughput(run)
			if err != nil {
				t.Fatal(err)
			}
			lag, err := plots.Lag(run)
			if err != nil {
				t.Fatal(err)
			}
			if pts, _, _ := plots.LatencyPoints(run[0].Result, "send_delay", ""); len(pts) == 0 || len(pts) > c.maxPoints {
				t.Errorf("send delay over time: %d points, want 1 to %d", len(pts), c.maxPoints)
			}
			charts := []plots.Chart{tp, lag}
			plots.AlignTimeCharts(charts)
			acked, _ := svgLines(renderSVG(t, charts[0]), plots.Colour(0))
			n := 0
			for _, l := range acked {
				n += len(l)
			}
			if n == 0 || n > c.maxPoints {
				t.Errorf("throughput: %d points drawn, want 1 to %d", n, c.maxPoints)
			}
			own, _ := svgLines(renderSVG(t, charts[1]), plots.Colour(0))
			m := 0
			for _, l := range own {
				m += len(l)
			}
			if charts[1].Plot.Y.Max < 5000 {
				t.Errorf("lag: axis reaches %.0f, want the 5,000 peak kept (not averaged away)", charts[1].Plot.Y.Max)
			}
			if m == 0 || m > c.maxPoints+2 {
				t.Errorf("lag: %d points drawn, want 1 to %d", m, c.maxPoints+2)
			}
			for _, ch := range charts {
				if !strings.HasPrefix(ch.Plot.X.Label.Text, c.unit) {
					t.Errorf("%s: x axis %q, want it in %s", ch.Name, ch.Plot.X.Label.Text, c.unit)
				}
				if c.unit == "hours" {
					ticks := ch.Plot.X.Tick.Marker.Ticks(ch.Plot.X.Min, ch.Plot.X.Max)
					var labels []string
					for _, tk := range ticks {
						if tk.Label != "" {
							labels = append(labels, tk.Label)
						}
					}
					if len(labels) < 2 || !strings.HasSuffix(labels[1], "h") {
						t.Errorf("%s: tick labels %v, want hours (\"2h\")", ch.Name, labels)
					}
				}
			}
		})
	}
}
