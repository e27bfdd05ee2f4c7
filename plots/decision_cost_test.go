package plots_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"qbench/plots"
	"qbench/results"
	"qbench/results/resultstest"
)

// The decision table's engine cost says what it counts: log bytes (what the engine appended to
// its log) apart from device writes (which count a preallocated log's zeros), summed across a
// crash's restart and saying so, n/a with the reason when a restart left them unknown or there is
// no log, and "includes qbench" for an engine inside qbench's process.
func TestDecisionTableEngineCost(t *testing.T) {
	mk := func(label, engine string, stats map[string]int64, inProcess bool) plots.Run {
		r := resultstest.Make(resultstest.Options{Name: "explore", Engine: engine, Seed: 1, Seconds: 8, Warmup: 1}) // 8,000 acknowledged
		r.Engine.Stats = stats
		r.Summary.Generator.InProcessEngine = inProcess
		if inProcess {
			r.Summary.Generator.CPUPerMessageNs = 12_000
			r.Series[0].Health = &results.EngineHealth{Counters: map[string]int64{"used_memory": 70 << 20}}
		}
		return plots.Run{Label: label, Result: r}
	}
	proc := map[string]int64{"proc_cpu_ns": 4e9, "proc_rss_bytes": 20 << 20, "proc_write_bytes": 8000 * 150_000, "engine_log_bytes": 8000 * 435, "engine_fsyncs": 2000}
	restarted := map[string]int64{"proc_cpu_ns": 4e9, "proc_rss_bytes": 20 << 20, "proc_write_bytes": 8000 * 300, "engine_log_bytes": 8000 * 400, "engine_fsyncs": 2000, "proc_restarts": 1}
	cases := []struct {
		run                        plots.Run
		gen, cpu, rss, log, device string
	}{
		{mk("server always", "server", proc, false), "—", "500us", "20.0 MiB", "435 B", "150000 B"},
		{mk("server crash", "server", restarted, false), "—", "500us (across 1 restart)", "20.0 MiB", "400 B (across 1 restart)", "300 B (across 1 restart)"},
		{mk("server unknown", "server", map[string]int64{"proc_rss_bytes": 20 << 20, "proc_cost_unknown": 1}, false), "—", "n/a (restarted)", "20.0 MiB", "n/a (restarted)", "n/a (restarted)"},
		{mk("server rewrite", "server", map[string]int64{"proc_cpu_ns": 4e9, "proc_rss_bytes": 20 << 20, "proc_write_bytes": 0, "engine_log_unknown": 1}, false), "—", "500us", "20.0 MiB", "n/a (log rewritten)", "0 B"},
		{mk("redis none", "redis", map[string]int64{"proc_cpu_ns": 4e9, "proc_rss_bytes": 20 << 20, "proc_write_bytes": 0}, false), "—", "500us", "20.0 MiB", "n/a (no log)", "0 B"},
		{mk("embedded", "embedded", map[string]int64{"engine_fsyncs": 8000, "engine_log_bytes": 8000 * 435}, true), "12us (includes the engine)", "in process (includes qbench)", "70.0 MiB (includes qbench)", "435 B", "—"},
	}
	var runs []plots.Run
	for _, c := range cases {
		runs = append(runs, c.run)
	}
	var buf bytes.Buffer
	if err := plots.WriteReport(&buf, runs, plots.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	start := strings.Index(html, `<h2 id="decision">`)
	if start < 0 {
		t.Fatal("no decision table")
	}
	table := html[start:]
	table = table[:strings.Index(table, "</table>")]
	header := regexp.MustCompile(`<th[^>]*>(.*?)</th>`).FindAllStringSubmatch(table, -1)
	col := map[string]int{}
	for i, h := range header {
		col[h[1]] = i - 1 // the run's label is not a cell of the row pattern below
	}
	for _, name := range []string{"generator CPU / msg", "engine CPU / msg", "engine RSS", "log bytes / msg", "device writes / msg"} {
		if _, ok := col[name]; !ok {
			t.Fatalf("no %q column in %q", name, header)
		}
	}
	if strings.Contains(table, "<th>written / msg</th>") {
		t.Error(`the old "written / msg" column is still there`)
	}
	rowRE := regexp.MustCompile(`<tr><td class="l"><span class="swatch"[^>]*></span>([^<]+)</td>(.*?)</tr>`)
	cellRE := regexp.MustCompile(`<td[^>]*>(.*?)</td>`)
	got := map[string][]string{}
	for _, m := range rowRE.FindAllStringSubmatch(table, -1) {
		for _, c := range cellRE.FindAllStringSubmatch(m[2], -1) {
			got[m[1]] = append(got[m[1]], c[1])
		}
	}
	for _, c := range cases {
		cells := got[c.run.Label]
		if len(cells) < len(header)-1 {
			t.Fatalf("%s: cells %q", c.run.Label, cells)
		}
		for name, want := range map[string]string{"generator CPU / msg": c.gen, "engine CPU / msg": c.cpu, "engine RSS": c.rss,
			"log bytes / msg": c.log, "device writes / msg": c.device} {
			if g := cells[col[name]]; g != want {
				t.Errorf("%s: %s %q, want %q", c.run.Label, name, g, want)
			}
		}
	}
}
