package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"qbench/bench"
	"qbench/results"
)

// qbench mark's refusals, each with its exit code and a message that says why: usage errors and
// malformed marks are 2 (checked before anything is sent), a run that refuses the mark or cannot
// be reached is 1.
func TestMarkCommandErrors(t *testing.T) {
	srv := httptest.NewServer(marksHandler(bench.NewMarkBoard())) // no run under way
	defer srv.Close()
	to := strings.TrimPrefix(srv.URL, "http://")
	dead := httptest.NewServer(http.NotFoundHandler())
	deadAddr := strings.TrimPrefix(dead.URL, "http://")
	dead.Close()
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no --to", []string{"start", "--kind", "pod-kill", "--target", "p"}, 2, "--to HOST:PORT is required"},
		{"unknown kind", []string{"start", "--to", to, "--kind", "meteor", "--target", "p"}, 2, `mark: kind: unknown fault kind "meteor" (one of stall,`},
		{"no target", []string{"end", "--to", to, "--kind", "pod-kill"}, 2, "target: missing"},
		{"bad action", []string{"stop", "--to", to, "--kind", "pod-kill", "--target", "p"}, 2, `action: "stop", want start or end`},
		{"no run under way", []string{"start", "--to", to, "--kind", "pod-kill", "--target", "p"}, 1, "(409 Conflict): mark refused: pod-kill start on p: outside the run: no run's load has begun yet"},
		{"nobody listening", []string{"start", "--to", deadAddr, "--kind", "pod-kill", "--target", "p"}, 1, "mark: no qbench run takes marks at http://" + deadAddr + "/marks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := qbench(t, append([]string{"mark"}, c.args...)...)
			if code != c.wantCode || !strings.Contains(stderr, c.wantErr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, c.wantCode, c.wantErr)
			}
		})
	}
}

// The endpoint refuses what is not a mark with 400 and says what was wrong; only POST is taken.
func TestMarksEndpointRefusesMalformed(t *testing.T) {
	srv := httptest.NewServer(marksHandler(bench.NewMarkBoard()))
	defer srv.Close()
	cases := []struct {
		name, method, body string
		wantCode           int
		wantErr            string
	}{
		{"not JSON", "POST", "kind=pod-kill", 400, "reading the mark: invalid character"},
		{"unknown field", "POST", `{"kind":"pod-kill","target":"p","action":"start","at":"now"}`, 400, `unknown field \"at\"`},
		{"unknown kind", "POST", `{"kind":"meteor","target":"p","action":"start"}`, 400, `kind: unknown fault kind \"meteor\"`},
		{"GET", "GET", "", 405, "POST a mark"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, srv.URL+marksPath, strings.NewReader(c.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.wantCode || !strings.Contains(string(b), c.wantErr) {
				t.Fatalf("%d %s; want %d and %q", resp.StatusCode, b, c.wantCode, c.wantErr)
			}
		})
	}
}

// A run on the embedded engine taking marks (qbench run --marks-listen 127.0.0.1:0), marked from
// another process (qbench mark): the window is in the result's faults, marked, with its kind,
// target and costs, and on the summary and the faults CSV.
func TestMarksDuringARun(t *testing.T) {
	dir := t.TempDir()
	sc := writeFile(t, "marked.yaml", "name: marked\nengine: embedded\nrate: 300\nduration: 3s\nseed: 5\n")
	out := filepath.Join(dir, "r.json")
	run := exec.Command(qbenchBin, "run", sc, "--marks-listen", "127.0.0.1:0", "-o", out)
	var stdout bytes.Buffer
	run.Stdout = &stdout
	errPipe, err := run.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	// The listener says where it is before the engine starts.
	addrRe := regexp.MustCompile(`taking fault marks at http://([0-9.:]+)/marks`)
	lines := bufio.NewScanner(errPipe)
	var addr string
	for addr == "" && lines.Scan() {
		if m := addrRe.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	go io.Copy(io.Discard, errPipe)
	if addr == "" {
		t.Fatal("qbench run did not say where it takes marks")
	}
	mark := func(action string) (string, int) {
		stdout, stderr, code := qbench(t, "mark", action, "--to", addr, "--kind", "network-partition", "--target", "node-2")
		return stdout + stderr, code
	}
	// Refused (exit 1) until the run's load begins: the engine's start-up is no part of a window.
	said, code := mark("start")
	for code == 1 && strings.Contains(said, "no run's load has begun yet") {
		said, code = mark("start")
	}
	if code != 0 {
		t.Fatalf("mark start: exit %d: %s", code, said)
	}
	if said, code := mark("end"); code != 0 || !strings.Contains(said, "marked end of network-partition on node-2") {
		t.Fatalf("mark end: exit %d: %s", code, said)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("qbench run: %v\n%s", err, stdout.String())
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) != 1 {
		t.Fatalf("faults %+v, want the one marked", res.Faults)
	}
	f := res.Faults[0]
	if !f.Marked || f.Kind != "network-partition" || f.Target != "node-2" || f.EndNs < f.StartNs || f.StartNs <= 0 {
		t.Errorf("fault row %+v", f)
	}
	if f.Lost != 0 || f.ProduceErrors != 0 || f.RecoverWriteNs < 0 || f.RecoverReadNs < 0 {
		t.Errorf("costs of a window in which nothing failed: %+v", f)
	}
	if !strings.Contains(stdout.String(), "network-partition (marked)") || !strings.Contains(stdout.String(), "marked faults: network-partition on node-2") {
		t.Errorf("summary lacks the marked fault:\n%s", stdout.String())
	}
	if _, stderr, code := qbench(t, "export", out, "-o", dir); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	fh, err := os.Open(filepath.Join(dir, "r.faults.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("faults CSV %v, %v", rows, err)
	}
	row := map[string]string{}
	for i, h := range rows[0] {
		row[h] = rows[1][i]
	}
	if row["kind"] != "network-partition" || row["marked"] != "true" || row["target"] != "node-2" {
		t.Errorf("faults CSV row %v", row)
	}
}
