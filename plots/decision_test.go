package plots_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"qbench/plots"
	"qbench/results/resultstest"
)

// The decision table's fsyncs per message: the engine's own count where it keeps one (the
// in-repo server, in process too), n/a with a footnote saying why where qbench started a server
// that counts none (redis-server), and a dash where qbench did not start the server.
func TestDecisionTableFsyncs(t *testing.T) {
	mk := func(label, engine string, stats map[string]int64) plots.Run {
		r := resultstest.Make(resultstest.Options{Name: "explore", Engine: engine, Seed: 1, Seconds: 8, Warmup: 1}) // 8,000 acknowledged
		r.Engine.Stats = stats
		return plots.Run{Label: label, Result: r}
	}
	proc := func(more map[string]int64) map[string]int64 {
		st := map[string]int64{"proc_cpu_ns": 4e9, "proc_rss_bytes": 20 << 20, "proc_write_bytes": 8000 * 300}
		for k, v := range more {
			st[k] = v
		}
		return st
	}
	cases := []struct {
		run   plots.Run
		fsync string
	}{
		{mk("server always", "server", proc(map[string]int64{"engine_fsyncs": 2000})), "0.250"},
		{mk("embedded always", "embedded", map[string]int64{"engine_fsyncs": 8000}), "1.000"},
		{mk("embedded memory", "embedded", map[string]int64{"engine_fsyncs": 0}), "0.000"},
		{mk("redis always", "redis", proc(nil)), "n/a<sup>*</sup>"},
		{mk("redis-url", "redis-url", nil), "—"},
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
	rowRE := regexp.MustCompile(`<tr><td class="l"><span class="swatch"[^>]*></span>([^<]+)</td>(.*?)</tr>`)
	cellRE := regexp.MustCompile(`<td[^>]*>(.*?)</td>`)
	got := map[string]string{}
	for _, m := range rowRE.FindAllStringSubmatch(table, -1) {
		cells := cellRE.FindAllStringSubmatch(m[2], -1)
		got[m[1]] = cells[len(cells)-1][1]
	}
	for _, c := range cases {
		if got[c.run.Label] != c.fsync {
			t.Errorf("%s: fsyncs/msg %q, want %q", c.run.Label, got[c.run.Label], c.fsync)
		}
	}
	if !strings.Contains(html, `id="fsync-note"`) || !strings.Contains(html, "redis-server 7.0's INFO persistence has no fsync counter") {
		t.Error("n/a fsyncs without the footnote saying why")
	}
	// Without an n/a there is no footnote.
	buf.Reset()
	if err := plots.WriteReport(&buf, runs[:2], plots.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `id="fsync-note"`) {
		t.Error("a footnote on n/a fsyncs with none in the table")
	}
}
