package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines/redisq"
	"qbench/results"
)

func needRedisServer(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is required under CI=true: %v", err)
		}
		t.Skipf("redis-server not installed: %v", err)
	}
}

// The whole path as on several machines: four qbench processes each run one segment against one
// redis-server, qbench merge joins their results into one run whose ledger accounts for every
// message once, merge refuses segments that do not make that run (exit 2), and --teardown-only
// removes the run's keys at the end.
func TestSegmentsEndToEnd(t *testing.T) {
	needRedisServer(t)
	srv, err := redisq.StartRedis(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	sc := writeFile(t, "seg.yaml", fmt.Sprintf("name: seg\nengine: redis-url\naddress: %s\ndesign: stream\nproducers: 5\nconsumers: 3\nrate: 1000\nduration: 1s\nwarmup: 0s\n", srv.Addr()))
	dir := t.TempDir()
	start := strconv.FormatInt(time.Now().Add(1500*time.Millisecond).UnixMilli(), 10)
	var paths []string
	for i := range 4 {
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("segment-%d.json", i)))
	}
	var wg sync.WaitGroup
	codes := make([]int, 4)
	stderrs := make([]string, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, stderrs[i], codes[i] = qbench(t, "run", sc, "--segment", fmt.Sprintf("%d/4", i), "--start-at", start, "-q", "-o", paths[i])
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 0 {
			t.Fatalf("segment %d: exit %d: %s", i, c, stderrs[i])
		}
	}
	merged := filepath.Join(dir, "merged.json")
	out, stderr, code := qbench(t, "merge", "--wait", "5s", paths[0], paths[1], paths[2], paths[3], "-o", merged)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	t.Logf("%s", out)
	m, err := results.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	l := m.Summary.Ledger
	if l.Sent != 1000 || l.Acked != 1000 || l.Delivered != 1000 || l.Lost != 0 || l.Duplicates != 0 || l.Queued != 0 {
		t.Errorf("merged ledger %+v: want 1000 sent, acknowledged and delivered once", l)
	}
	if m.Merged == nil || m.Merged.Mode != results.MergeSegmentsMode || len(m.Segments) != 4 || m.Segment != nil {
		t.Errorf("merged: %+v, %d segments", m.Merged, len(m.Segments))
	}
	// 5 producers over 4 segments: the first segment runs two.
	if p := m.Segments[0].Producers; p.First != 0 || p.Count != 2 {
		t.Errorf("segment 0 ran producers %+v, want 0 and 1", p)
	}

	seg0, err := results.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	altered := func(name string, f func(r *results.Result)) string {
		r, err := results.ReadFile(paths[1])
		if err != nil {
			t.Fatal(err)
		}
		f(r)
		p := filepath.Join(dir, name)
		if err := results.WriteFile(p, r); err != nil {
			t.Fatal(err)
		}
		return p
	}
	single := writeFile(t, "single.json", "")
	if err := results.WriteFile(single, &results.Result{SchemaVersion: results.SchemaVersion, RunID: "other", Scenario: seg0.Scenario, Engine: seg0.Engine}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		inputs []string
		want   string
	}{
		{"a missing segment", []string{paths[0], paths[1], paths[3]}, "missing 2"},
		{"a repeated segment", []string{paths[0], paths[1], paths[1], paths[2], paths[3]}, "segment 1/4 is given more than once"},
		{"another run's segment", []string{paths[0], altered("runid.json", func(r *results.Result) { r.RunID = "elsewhere" }), paths[2], paths[3]}, "is of run elsewhere"},
		{"a different N", []string{paths[0], altered("n.json", func(r *results.Result) { r.Segment.Count = 5 }), paths[2], paths[3]}, "result 2 is segment 1/5"},
		{"a different scenario", []string{paths[0], altered("sc.json", func(r *results.Result) {
			r.Scenario = []byte(strings.Replace(string(r.Scenario), `"rate":`, `"rate_was":0,"rate":`, 1))
		}), paths[2], paths[3]}, "different scenario"},
		{"a result that is not a segment", []string{paths[0], paths[1], paths[2], paths[3], single}, "is not a segment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := qbench(t, append([]string{"merge", "-o", filepath.Join(dir, "x.json")}, tc.inputs...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("merge: exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}

	// The same missing segment with --allow-missing: merged from the other three, PARTIAL, the
	// missing share unknown and nothing lost.
	t.Run("a missing segment allowed", func(t *testing.T) {
		p := filepath.Join(dir, "partial.json")
		out, stderr, code := qbench(t, "merge", "--allow-missing", paths[0], paths[1], paths[3], "-o", p)
		if code != 0 || !strings.Contains(out, "PARTIAL: segment 2 of 4 missing") {
			t.Fatalf("merge --allow-missing: exit %d, %s\n%s", code, stderr, out)
		}
		m, err := results.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if miss := m.Merged.Missing; miss == nil || len(miss.Segments) != 1 || miss.Segments[0] != 2 || miss.Producers != 1 || m.Summary.Ledger.Lost != 0 {
			t.Errorf("missing %+v, ledger %+v", m.Merged.Missing, m.Summary.Ledger)
		}
	})

	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	keys := func() []string {
		k, err := rdb.Keys(context.Background(), "qbench:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if len(keys()) == 0 {
		t.Fatalf("no keys left after the segments: tear-down should wait for --teardown-only")
	}
	if _, stderr, code := qbench(t, "run", sc, "--teardown-only", "--start-at", start); code != 0 {
		t.Fatalf("--teardown-only: exit %d: %s", code, stderr)
	}
	if k := keys(); len(k) != 0 {
		t.Errorf("keys left after --teardown-only: %v", k)
	}
}

func TestSegmentFlagsRefused(t *testing.T) {
	url := writeFile(t, "url.yaml", "name: u\nengine: redis-url\naddress: 127.0.0.1:1\nproducers: 2\nconsumers: 2\nrate: 100\nduration: 1s\n")
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a managed engine", []string{"run", "../../scenarios/quickstart.yaml", "--segment", "0/2", "--start-at", future}, "cannot be shared"},
		{"no start time", []string{"run", url, "--segment", "0/2"}, "needs --start-at"},
		{"a start in the past", []string{"run", url, "--segment", "0/2", "--start-at", strconv.FormatInt(time.Now().Add(-5*time.Second).UnixMilli(), 10)}, "in the past"},
		{"a bad segment", []string{"run", url, "--segment", "2/2", "--start-at", future}, "want i/N"},
		{"a bad start time", []string{"run", url, "--segment", "0/2", "--start-at", "tomorrow"}, "RFC 3339"},
		{"a start time alone", []string{"run", url, "--start-at", future}, "give --segment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := qbench(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}
