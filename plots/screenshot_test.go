package plots_test

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"qbench/plots"
)

// alignScript is added to a copy of the report for the test only: for each chart over time it
// prints the rendered left and right of its plot area, read from the horizontal grid lines (which
// gonum draws across the whole data area), in CSS pixels.
const alignScript = `<script>
(function () {
  var out = [];
  document.querySelectorAll('figure').forEach(function (f) {
    var title = f.getAttribute('aria-label') || '';
    if (!/over time|^throughput|^consumer lag/.test(title)) return;
    var l = Infinity, r = -Infinity;
    f.querySelectorAll('path').forEach(function (p) {
      if ((p.getAttribute('style') || '') !== 'fill:none;stroke:#808080;stroke-width:0.25') return;
      var b = p.getBoundingClientRect();
      if (b.height > 1.5) return;
      l = Math.min(l, b.left); r = Math.max(r, b.right);
    });
    out.push(title + '|' + l.toFixed(2) + '|' + r.toFixed(2));
  });
  var p = document.createElement('pre');
  p.id = 'areas';
  p.textContent = 'ALIGN' + 'ED[' + out.join('\n') + ']';
  document.body.appendChild(p);
})();
</script>`

// A flagged eight-cell matrix report (with its grid and an objective) and a flagged run with
// faults, rendered in headless Chromium: the flags are in the page's text (the decision table's
// trust cell, the banner, the footnote, the run's section, the legends' and the grid's [!]), the
// banner's colour is in the screenshot, no SVG text overprints another, and the stacked charts'
// plot areas start and end at the same pixel (within 1 px).
func TestFlaggedReportsInChromium(t *testing.T) {
	bin := chromium(t)
	faulted := faultedRun()
	flagRun(faulted.Result)
	runs, ix := flaggedMatrix()
	slo, err := plots.ParseSLOs([]string{"e2e.p99<=1.5ms"})
	if err != nil {
		t.Fatal(err)
	}
	grids, err := plots.GridsFromRuns(ix, matrixResults(runs), slo)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		runs []plots.Run
		opt  plots.ReportOptions
		want []string
	}{
		{"flagged matrix", runs, plots.ReportOptions{Extra: grids, SLO: slo}, []string{
			plots.WarnSign + " flagged: generator-late, unsent", "producers were late: send delay p99 21.05ms",
			"2 of 8 runs are flagged", "Cheapest meeting e2e.p99", "achieved / offered",
			"redis none " + plots.FlagMark, plots.FlagMark + " generator-late, unsent", "meets objective", "misses objective"}},
		{"nine runs in small multiples", append(append([]plots.Run(nil), runs...), faulted), plots.ReportOptions{}, []string{
			"3 of 9 runs are flagged", "stream " + plots.FlagMark, "every small chart on the same axes", "consumer-pause"}},
		{"flagged faulted run", []plots.Run{faulted}, plots.ReportOptions{}, []string{
			"stream</strong> is flagged", "Trust:", plots.WarnSign + " flagged", "unsent", "stream " + plots.FlagMark,
			"consumer-pause", "consumer-crash", "never came back"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opt.Generated = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			var b bytes.Buffer
			if err := plots.WriteReport(&b, c.runs, c.opt); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			page := filepath.Join(dir, "report.html")
			if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			checked := filepath.Join(dir, "checked.html")
			html := strings.Replace(b.String(), "</body>", overlapScript+alignScript+"</body>", 1)
			if err := os.WriteFile(checked, []byte(html), 0o644); err != nil {
				t.Fatal(err)
			}
			dom := string(headless(t, bin, "--window-size=1280,2000", "--dump-dom", "file://"+checked))
			for _, w := range c.want {
				if !strings.Contains(dom, w) {
					t.Errorf("rendered report lacks %q", w)
				}
			}
			m := regexp.MustCompile(`(?s)TEXTS-CHECKED\[(\d+)\] OVERLAPS\[(.*?)\]</pre>`).FindStringSubmatch(dom)
			if m == nil {
				t.Fatal("the overlap check did not run")
			}
			if m[2] != "" {
				t.Errorf("overlapping text in the rendered report:\n%s", m[2])
			}
			checkAligned(t, dom)

			// The screenshot shows the flag: the banner's colour fills a band at the top.
			shot := filepath.Join(dir, "report.png")
			headless(t, bin, "--window-size=1280,1400", "--screenshot="+shot, "file://"+page)
			pb, err := os.ReadFile(shot)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(pb))
			if err != nil {
				t.Fatal(err)
			}
			if n := countColour(img, color.RGBA{R: 0xff, G: 0xf3, B: 0xcd, A: 0xff}); n < 20000 {
				t.Errorf("the flag banner's colour covers %d pixels of the screenshot", n)
			}
		})
	}
}

// checkAligned reads alignScript's output: every chart over time's plot area within 1 px of the
// first one's, left and right.
func checkAligned(t *testing.T, dom string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)ALIGNED\[(.*?)\]</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("the alignment check did not run")
	}
	lines := strings.Split(m[1], "\n")
	if len(lines) < 4 {
		t.Fatalf("only %d charts over time measured: %q", len(lines), m[1])
	}
	var l0, r0 float64
	for i, line := range lines {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("area line %q", line)
		}
		var l, r float64
		fmt.Sscan(f[1], &l)
		fmt.Sscan(f[2], &r)
		if math.IsInf(l, 0) || r-l < 300 {
			t.Errorf("%s: plot area %v..%v px", f[0], l, r)
		}
		if i == 0 {
			l0, r0 = l, r
			continue
		}
		if math.Abs(l-l0) > 1 || math.Abs(r-r0) > 1 {
			t.Errorf("%s: plot area %.1f..%.1f px, the first chart's %.1f..%.1f px", f[0], l, r, l0, r0)
		}
	}
}
