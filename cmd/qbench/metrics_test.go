package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"qbench/results"
)

// --metrics-addr and --metrics-linger refuse bad input before anything runs, exit 2.
func TestMetricsFlagErrors(t *testing.T) {
	sc := writeFile(t, "m.yaml", "name: m\nengine: embedded\nrate: 100\nduration: 1s\nseed: 1\n")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no port", []string{"--metrics-addr", "localhost"}, `--metrics-addr "localhost": want HOST:PORT`},
		{"port taken", []string{"--metrics-addr", busy.Addr().String()}, "--metrics-addr " + busy.Addr().String() + ": listen tcp"},
		{"linger alone", []string{"--metrics-linger", "3s"}, "--metrics-linger is for --metrics-addr"},
		{"negative linger", []string{"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "-1s"}, "--metrics-linger -1s: want a duration >= 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := qbench(t, append([]string{"run", sc}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.wantErr) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, c.wantErr)
			}
		})
	}
}

// A real Prometheus (Debian's package) scrapes a short embedded run every second: once the run
// has finished, its delivered counter as PromQL reads it equals the result file's delivered
// count, and the end-to-end native histogram holds as many values as the run's per-second series.
// Under CI=true a missing prometheus binary fails the test.
func TestMetricsPrometheusScrape(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus not installed (Debian: apt-get install prometheus); required under CI=true")
		}
		t.Skip("prometheus not installed (Debian: apt-get install prometheus)")
	}
	dir := t.TempDir()
	const runID = "metrics-prom-test"
	sc := writeFile(t, "m.yaml", "name: m\nengine: embedded\nrate: 500\nduration: 3s\nwarmup: 500ms\nseed: 9\n"+
		"faults:\n  - {at: 1s, kind: consumer-pause, duration: 500ms}\n")
	// Prometheus first, scraping before the run starts, so that it sees the run's load and not
	// only its end. Targets reach its scrapers in 5-second batches, even static ones, so a
	// target found later (file_sd) is first scraped after a short run: the two ports are taken
	// and let go instead, the one way to hand each process its port before the other starts.
	promAddr, target := freeAddr(t), freeAddr(t)
	cfg := filepath.Join(dir, "prometheus.yml")
	body := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: qbench\n"+
		"    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := exec.Command(promBin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--enable-feature=native-histograms", "--log.level=warn")
	var promLog strings.Builder
	prom.Stdout, prom.Stderr = &promLog, &promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = prom.Process.Kill()
		_ = prom.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", promLog.String())
		}
	}()
	// Scraping once it has recorded the target as down (qbench is not listening yet).
	for deadline := time.Now().Add(60 * time.Second); ; {
		_, _, ok, err := promQuery(promAddr, `up{job="qbench"}`, "")
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not scraping within 60 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // polling another process's state
	}

	out := filepath.Join(dir, "r.json")
	run := exec.Command(qbenchBin, "run", sc, "-o", out, "--run-id", runID, "--metrics-addr", target, "--metrics-linger", "3s")
	errPipe, err := run.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	lines := bufio.NewScanner(errPipe)
	var said bool
	for !said && lines.Scan() {
		said = strings.Contains(lines.Text(), "live metrics at http://"+target+"/metrics")
	}
	go io.Copy(io.Discard, errPipe)
	if !said {
		t.Fatal("qbench run did not say where its metrics are")
	}

	// The delivered counter, once the run says it has finished (the counters then hold the
	// result's figures), in one query: before that it answers nothing.
	sel := fmt.Sprintf(`{run=%q,engine="embedded",design="stream"}`, runID)
	finished := "qbench_delivered_total" + sel + " and on(run) (qbench_run_finished" + sel + " == 1)"
	var delivered float64
	var at string
	deadline := time.Now().Add(60 * time.Second)
	for {
		v, ts, ok, err := promQuery(promAddr, finished, "")
		if err == nil && ok {
			delivered, at = v, ts
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no finished run in Prometheus within 60 s (last error: %v)", err)
		}
		time.Sleep(200 * time.Millisecond) // polling another process's state
	}
	e2eCount, _, ok, err := promQuery(promAddr, "histogram_count(qbench_e2e_latency_seconds"+sel+")", at)
	if err != nil || !ok {
		t.Fatalf("native histogram count: %v (found %v)", err, ok)
	}
	t.Run("dashboard queries", func(t *testing.T) {
		// Every query of the shipped Grafana dashboard parses and runs on this Prometheus
		// (its variables set to match everything); those over the whole run find data.
		for _, q := range dashboardQueries(t) {
			expr := strings.NewReplacer("$__rate_interval", "1m", `"$run"`, `".*"`, `"$engine"`, `".*"`,
				`"$design"`, `".*"`, `"$cell"`, `".*"`).Replace(q)
			n, err := promSeries(promAddr, expr, at)
			// Classic buckets are not stored where native histograms are read; the fault
			// annotation finds a window only if a scrape fell inside it.
			mayBeEmpty := strings.Contains(q, "_bucket") || strings.Contains(q, "qbench_fault_active") && strings.Contains(q, "== 1")
			if err != nil || n == 0 && !mayBeEmpty {
				t.Errorf("%s: %d series, %v", q, n, err)
			}
		}
	})
	if err := run.Wait(); err != nil {
		t.Fatalf("qbench run: %v", err)
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := res.Summary.Ledger.Delivered; want == 0 || delivered != float64(want) {
		t.Fatalf("Prometheus has qbench_delivered_total %v, the result file %d (> 0)", delivered, want)
	}
	var want int64
	for _, iv := range res.Series {
		want += iv.E2E.Count
	}
	if e2eCount != float64(want) {
		t.Fatalf("Prometheus has %v end-to-end latencies in the native histogram, the per-second series %d", e2eCount, want)
	}
}

// promSeries runs an instant query at a time and says how many series it returned; an error
// is Prometheus refusing the query.
func promSeries(addr, q, at string) (int, error) {
	resp, err := http.PostForm("http://"+addr+"/api/v1/query", url.Values{"query": {q}, "time": {at}})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	if body.Status != "success" {
		return 0, errors.New(body.Error)
	}
	return len(body.Data.Result), nil
}

// promQuery asks Prometheus's HTTP API for one instant value (at a time, when at is set): ok
// says the answer held a sample; ts is its time, as the API wrote it.
func promQuery(addr, q, at string) (v float64, ts string, ok bool, err error) {
	form := url.Values{"query": {q}}
	if at != "" {
		form.Set("time", at)
	}
	resp, err := http.PostForm("http://"+addr+"/api/v1/query", form)
	if err != nil {
		return 0, "", false, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]json.RawMessage `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, "", false, err
	}
	if body.Status != "success" {
		return 0, "", false, fmt.Errorf("query %s: %s", q, body.Error)
	}
	if len(body.Data.Result) != 1 {
		return 0, "", false, fmt.Errorf("query %s: %d series", q, len(body.Data.Result))
	}
	var s string
	if err := json.Unmarshal(body.Data.Result[0].Value[1], &s); err != nil {
		return 0, "", false, err
	}
	v, err = strconv.ParseFloat(s, 64)
	return v, string(body.Data.Result[0].Value[0]), err == nil, err
}

// dashboardQueries are the PromQL expressions of plots/grafana/qbench-dashboard.json: its
// panels' targets and its annotations.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "plots", "grafana", "qbench-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		Expr string `json:"expr"`
	}
	var d struct {
		Annotations struct {
			List []target `json:"list"`
		} `json:"annotations"`
		Panels []struct {
			Targets []target `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			out = append(out, a.Expr)
		}
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d queries in the dashboard", len(out))
	}
	return out
}

// freeAddr is a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
