package plots_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"qbench/plots"
	"qbench/results"
	"qbench/results/resultstest"
)

// faultedRun is a run with the faults the issue found unreadable: two consumer pauses at the
// same moment (their labels used to overprint), a consumer that never came back, and a stall.
func faultedRun() plots.Run {
	r := resultstest.Make(resultstest.Options{Name: "faulted", Seed: 1, Seconds: 8, Warmup: 1,
		StallAt: 5 * time.Second, StallFor: 400 * time.Millisecond, Lost: 4, Duplicates: 2})
	s := int64(time.Second)
	r.Faults = []results.FaultWindow{
		{Kind: "consumer-pause", Target: "consumer 0", StartNs: 2 * s, EndNs: 3 * s, LagPeak: 498, RecoverWriteNs: 1e6, RecoverReadNs: 2e6},
		{Kind: "consumer-pause", Target: "consumer 1", StartNs: 2 * s, EndNs: 3 * s, LagPeak: 498, RecoverWriteNs: 1e6, RecoverReadNs: 3e6},
		{Kind: "consumer-crash", Target: "consumer 2", StartNs: 3*s + s/2, EndNs: 0, Duplicates: 2, RecoverWriteNs: -1, RecoverReadNs: -1},
		{Kind: "stall", Target: "server", StartNs: 5 * s, EndNs: 5*s + 4*s/10, Lost: 4, RecoverWriteNs: 2e6, RecoverReadNs: 2e6,
			LossWindowNs: 1234 * int64(time.Millisecond), LastDurableNs: 3*s + 700*int64(time.Millisecond)},
	}
	r.Summary.DrainSeconds = 0.4
	for i := range r.Series {
		r.Series[i].Health = &results.EngineHealth{Counters: map[string]int64{"aof_delayed_fsync": int64(i / 3), "used_memory": 1 << 20},
			Status: map[string]string{"aof_last_write_status": "ok"},
			Events: []results.LatencyEvent{{Name: "aof-fsync-always", LatestMs: 3, MaxMs: int64(3 + i)}}}
	}
	return plots.Run{Label: "stream", Result: r}
}

// matrixRuns are eight cells of an engine x policy matrix, labelled by their axis values.
func matrixRuns() []plots.Run {
	var runs []plots.Run
	for i, engine := range []string{"redis", "server"} {
		for j, policy := range []string{"none", "snapshot", "aof-everysec", "aof-always"} {
			r := resultstest.Make(resultstest.Options{Name: "persistence-explorer/engine=" + engine + ",policy=" + policy, Seed: uint64(1 + 4*i + j),
				Seconds: 5, Warmup: 1, ProduceMedian: time.Duration(200+150*j) * time.Microsecond, Lost: int64(3 * (3 - j) * i)})
			runs = append(runs, plots.Run{Label: engine + " " + policy, Result: r})
		}
	}
	return runs
}

// overlapScript is added to a copy of the report for the test only (the report itself has no
// script): it lists every pair of non-empty SVG text elements, within one SVG, whose rendered
// bounding boxes intersect by more than a pixel across and by more than 40% of the lower box's
// height. A text's box in Chromium is the font's whole line box (ascent, descent and line gap:
// 25 px for gonum's 10 pt labels), so lines set one font height apart, as gonum sets legend
// rows, share about 5 px of box with no glyph touching; two labels printed over each other share
// nearly all of it.
const overlapScript = `<script>
(function () {
  var out = [];
  document.querySelectorAll('svg').forEach(function (svg, si) {
    var ts = Array.prototype.slice.call(svg.querySelectorAll('text')).map(function (t) {
      return {t: t.textContent.trim(), r: t.getBoundingClientRect()};
    }).filter(function (x) { return x.t !== '' && x.r.width > 0; });
    for (var i = 0; i < ts.length; i++) for (var j = i + 1; j < ts.length; j++) {
      var a = ts[i].r, b = ts[j].r;
      var ix = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      var iy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (ix > 1 && iy > 0.4 * Math.min(a.height, b.height)) out.push('svg ' + si + ': "' + ts[i].t + '" overlaps "' + ts[j].t + '" by ' + ix.toFixed(1) + 'x' + iy.toFixed(1) + ' (heights ' + a.height.toFixed(1) + ', ' + b.height.toFixed(1) + ')');
    }
  });
  var p = document.createElement('pre');
  p.id = 'overlaps';
  p.textContent = 'TEXTS-CHECKED[' + document.querySelectorAll('svg text').length + '] OVERLAPS[' + out.join('\n') + ']';
  document.body.appendChild(p);
})();
</script>`

// The report of a faulted run and of an eight-cell matrix, rendered in headless Chromium, has no
// SVG text overprinting other text: not the fault timeline's labels, not the charts' legends,
// tick labels or bar values. The matrix report opens with the decision table and a short title;
// the faulted run's fault table shows each fault's cost and "never came back".
func TestReportTextDoesNotOverlapInChromium(t *testing.T) {
	bin := chromium(t)
	cases := []struct {
		name string
		runs []plots.Run
		want []string
	}{
		{"faulted run", []plots.Run{faultedRun()}, []string{"never came back", "consumer 1", "498", "Fault timeline", "aof_delayed_fsync", "aof-fsync-always", "10 ms", "1.23s (4 msgs)", "3.7s"}},
		{"command faults", []plots.Run{commandRun()}, []string{"instant", "600ms", "did not end before the run did", "command (server) at 2s, instant", "command (server) at 6s, did not end before the run did"}},
		{"eight-cell matrix", matrixRuns(), []string{"qbench: persistence-explorer, 8 runs", "Decision table", "server aof-always", "lost per fault kind"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := plots.WriteReport(&b, c.runs, plots.ReportOptions{Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
				t.Fatal(err)
			}
			html := strings.Replace(b.String(), "</body>", overlapScript+"</body>", 1)
			path := filepath.Join(t.TempDir(), "report.html")
			if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
				t.Fatal(err)
			}
			dom := string(headless(t, bin, "--window-size=1280,2000", "--dump-dom", "file://"+path))
			for _, w := range c.want {
				if !strings.Contains(dom, w) {
					t.Errorf("rendered report lacks %q", w)
				}
			}
			m := regexp.MustCompile(`(?s)TEXTS-CHECKED\[(\d+)\] OVERLAPS\[(.*?)\]</pre>`).FindStringSubmatch(dom)
			if m == nil {
				t.Fatal("the overlap check did not run")
			}
			var n int
			fmt.Sscan(m[1], &n)
			if n < 50 {
				t.Fatalf("only %d SVG text elements checked; the charts did not render", n)
			}
			if m[2] != "" {
				t.Errorf("overlapping text in the rendered report:\n%s", m[2])
			}
		})
	}
}
