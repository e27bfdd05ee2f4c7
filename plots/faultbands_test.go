package plots_test

import (
	"bytes"
	"math"
	"regexp"
	"testing"
	"time"

	"qbench/plots"
	"qbench/results"
	"qbench/results/resultstest"
)

// commandRun is an 8 s run (1 s warm-up) with three command faults: a CONFIG SET at 2 s that
// started no background work (an instant), a BGSAVE at 4 s whose snapshot took 600 ms (the
// window the runner measured), and a BGREWRITEAOF at 6 s still rewriting when the run ended
// (open: its end is the largest int64, as the runner leaves it).
func commandRun() plots.Run {
	r := resultstest.Make(resultstest.Options{Name: "commands", Seed: 4, Seconds: 8, Warmup: 1})
	s := int64(time.Second)
	r.Faults = []results.FaultWindow{
		{Kind: "command", Target: "server", StartNs: 2 * s, EndNs: 2 * s, Instant: true, RecoverWriteNs: 1e5, RecoverReadNs: 2e5},
		{Kind: "command", Target: "server", StartNs: 4 * s, EndNs: 4*s + 600*int64(time.Millisecond), RecoverWriteNs: 1e5, RecoverReadNs: 2e5},
		{Kind: "command", Target: "server", StartNs: 6 * s, EndNs: math.MaxInt64, RecoverWriteNs: -1, RecoverReadNs: -1},
	}
	return plots.Run{Label: "commands", Result: r}
}

// Bands tells an instant from a fault that never ended, and keeps a measured window as
// measured: a command fault of zero length is an instant (also in a result written before
// FaultWindow.Instant existed), while a consumer crash of zero length is a consumer that never
// came back.
func TestBandsTellInstantFromOpen(t *testing.T) {
	s := int64(time.Second)
	end := 8 * time.Second // the fixture's run end: warm-up 1 s, measured 7 s, no drain
	cases := []struct {
		name          string
		w             results.FaultWindow
		start, endAt  time.Duration
		instant, open bool
	}{
		{"instant command", results.FaultWindow{Kind: "command", StartNs: 2 * s, EndNs: 2 * s, Instant: true}, 2 * time.Second, 2 * time.Second, true, false},
		{"command from an older result", results.FaultWindow{Kind: "command", StartNs: 2 * s, EndNs: 2 * s}, 2 * time.Second, 2 * time.Second, true, false},
		{"measured snapshot", results.FaultWindow{Kind: "command", StartNs: 4 * s, EndNs: 4*s + s/2}, 4 * time.Second, 4500 * time.Millisecond, false, false},
		{"rewrite still going", results.FaultWindow{Kind: "command", StartNs: 6 * s, EndNs: math.MaxInt64}, 6 * time.Second, end, false, true},
		{"consumer that never came back", results.FaultWindow{Kind: "consumer-crash", StartNs: 3 * s, EndNs: 3 * s}, 3 * time.Second, end, false, true},
		{"crash never answered", results.FaultWindow{Kind: "server-crash", StartNs: 5 * s, EndNs: 0}, 5 * time.Second, end, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := resultstest.Make(resultstest.Options{Seed: 4, Seconds: 8, Warmup: 1})
			r.Faults = []results.FaultWindow{c.w}
			bs, err := plots.Bands(r)
			if err != nil || len(bs) != 1 {
				t.Fatalf("bands %+v, %v", bs, err)
			}
			b := bs[0]
			if b.Start != c.start || b.End != c.endAt || b.Instant != c.instant || b.Open != c.open {
				t.Errorf("band %v to %v instant %v open %v, want %v to %v instant %v open %v", b.Start, b.End, b.Instant, b.Open, c.start, c.endAt, c.instant, c.open)
			}
		})
	}
}

// In the report an instant command fault reads "instant", the measured snapshot its own
// length, and only the rewrite still going "did not end before the run did"; on the charts the
// instant is a thin band (at least 2 points, not to the end of the run), the snapshot a band of
// its measured 600 ms, and the open rewrite a band to the end of the run.
func TestInstantAndOpenCommandFaults(t *testing.T) {
	run := commandRun()
	var buf bytes.Buffer
	if err := plots.WriteReport(&buf, []plots.Run{run}, plots.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // "at" cell -> "lasting" cell
	re := regexp.MustCompile(`<tr><td class="l">command</td><td class="l">server</td><td>([^<]+)</td><td>([^<]+)</td>`)
	for _, m := range re.FindAllStringSubmatch(buf.String(), -1) {
		rows[m[1]] = m[2]
	}
	for at, want := range map[string]string{"2s": "instant", "4s": "600ms", "6s": "did not end before the run did"} {
		if rows[at] != want {
			t.Errorf("fault at %s lasting %q, want %q (rows %v)", at, rows[at], want, rows)
		}
	}
	if len(rows) != 3 {
		t.Errorf("%d command rows in the fault table, want 3: %v", len(rows), rows)
	}

	ch, err := plots.Lag([]plots.Run{run})
	if err != nil {
		t.Fatal(err)
	}
	svg := renderSVG(t, ch)
	area := warmupArea(t, svg, 1)
	bands := svgBands(svg, plots.FaultKindColour("command"), 5) // the command lane
	if len(bands) != 3 {
		t.Fatalf("%d command bands drawn, want 3: %v", len(bands), bands)
	}
	instant, snapshot, rewrite := bands[0], bands[1], bands[2]
	if w := instant[1] - instant[0]; w < 1.9 || w > 4 || math.Abs(area.seconds(instant[0])-2) > 0.02 {
		t.Errorf("instant drawn from %.2fs, %.1f points wide: want a thin band at 2s", area.seconds(instant[0]), w)
	}
	if a, b := area.seconds(snapshot[0]), area.seconds(snapshot[1]); math.Abs(a-4) > 0.02 || math.Abs(b-4.6) > 0.02 {
		t.Errorf("snapshot drawn %.2fs to %.2fs, want 4s to 4.6s", a, b)
	}
	if a, b := area.seconds(rewrite[0]), area.seconds(rewrite[1]); math.Abs(a-6) > 0.02 || b < 7.9 {
		t.Errorf("open rewrite drawn %.2fs to %.2fs, want 6s to the run's end (8s)", a, b)
	}
}

// Bands stand where the fault happened, not where it was planned: the fixture's stall was
// planned at 4 s for 700 ms, but the result measured it from 4.3 s to 5.5 s (it fired late and
// the server answered late). Without measured windows the plan is drawn. Checked on every chart
// with fault bands.
func TestBandsAtMeasuredWindowNotPlanned(t *testing.T) {
	measured := resultstest.Make(resultstest.Options{Name: "q", Seed: 1, Seconds: 8, Warmup: 1, StallAt: 4 * time.Second, StallFor: 700 * time.Millisecond})
	measured.Faults = []results.FaultWindow{{Kind: "stall", Target: "server", StartNs: int64(4300 * time.Millisecond), EndNs: int64(5500 * time.Millisecond)}}
	planned := resultstest.Make(resultstest.Options{Name: "q", Seed: 1, Seconds: 8, Warmup: 1, StallAt: 4 * time.Second, StallFor: 700 * time.Millisecond})
	for _, c := range []struct {
		name     string
		r        *results.Result
		from, to float64
	}{{"measured", measured, 4.3, 5.5}, {"planned", planned, 4.0, 4.7}} {
		for _, chart := range []func([]plots.Run) (plots.Chart, error){plots.Lag, plots.Throughput} {
			ch, err := chart([]plots.Run{{Label: c.name, Result: c.r}})
			if err != nil {
				t.Fatal(err)
			}
			svg := renderSVG(t, ch)
			area := warmupArea(t, svg, 1)
			bands := svgBands(svg, plots.FaultKindColour("stall"), 5) // the stall lane
			if len(bands) != 1 {
				t.Fatalf("%s %s: %d stall bands, want 1", c.name, ch.Name, len(bands))
			}
			if a, b := area.seconds(bands[0][0]), area.seconds(bands[0][1]); math.Abs(a-c.from) > 0.02 || math.Abs(b-c.to) > 0.02 {
				t.Errorf("%s %s: band drawn %.2fs to %.2fs, want %.1fs to %.1fs", c.name, ch.Name, a, b, c.from, c.to)
			}
		}
	}
}
