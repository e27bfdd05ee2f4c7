package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"qbench/engines/redisq"
	"qbench/results"
)

// runSegments runs every segment of sc in a qbench process of its own, all from one start
// instant, and returns their results and the merged one (qbench merge).
func runSegments(t *testing.T, sc string, n int) (segs []*results.Result, merged *results.Result) {
	t.Helper()
	dir := t.TempDir()
	start := strconv.FormatInt(time.Now().Add(1500*time.Millisecond).UnixMilli(), 10)
	paths := make([]string, n)
	codes, stderrs := make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		paths[i] = filepath.Join(dir, fmt.Sprintf("segment-%d.json", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, stderrs[i], codes[i] = qbench(t, "run", sc, "--segment", fmt.Sprintf("%d/%d", i, n), "--start-at", start, "-q", "-o", paths[i])
		}()
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 0 {
			t.Fatalf("segment %d: exit %d: %s", i, codes[i], stderrs[i])
		}
		r, err := results.ReadFile(paths[i])
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, r)
	}
	out := filepath.Join(dir, "merged.json")
	stdout, stderr, code := qbench(t, append([]string{"merge", "-o", out}, paths...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	t.Logf("merged:\n%s", stdout)
	m, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return segs, m
}

// window finds the fault row of kind that started at about at (since the run's epoch) in ws.
func window(t *testing.T, who string, ws []results.FaultWindow, kind string, at time.Duration) results.FaultWindow {
	t.Helper()
	for _, w := range ws {
		if w.Kind == kind && time.Duration(w.StartNs) > at-200*time.Millisecond && time.Duration(w.StartNs) < at+200*time.Millisecond {
			return w
		}
	}
	t.Fatalf("%s has no %s window at about %s: %+v", who, kind, at, ws)
	return results.FaultWindow{}
}

// Faults in a run from two qbench processes against one redis-server (redis-url): the engine-side
// faults are fired once, by the segment each names (segment 0 by default), and a consumer pause
// of consumer 1 only by segment 1, which runs it. The stall segment 0 fires while writes are
// refused (min-replicas-to-write 1, a command fault) makes both segments' sends fail: the merged
// stall row is charged the failed sends of both segments, not only its own segment's, and the
// first stall's wait is in both segments' produce latency.
func TestSegmentedRunFiresFaultsOnceAndCostsThemOverBoth(t *testing.T) {
	needRedisServer(t)
	srv, err := redisq.StartRedis(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	sc := writeFile(t, "segfaults.yaml", fmt.Sprintf(`name: segfaults
engine: redis-url
address: %s
design: list
producers: 2
consumers: 2
rate: 400
duration: 3s
warmup: 0s
drain_timeout: 2s
seed: 3
faults:
  - {at: 500ms, kind: stall, duration: 300ms}
  - {at: 1200ms, kind: command, command: [CONFIG, SET, min-replicas-to-write, "1"]}
  - {at: 1200ms, kind: stall, duration: 400ms}
  - {at: 1800ms, kind: command, command: [CONFIG, SET, min-replicas-to-write, "0"], segment: 1}
  - {at: 2200ms, kind: consumer-pause, consumer: 1, duration: 300ms}
`, srv.Addr()))
	segs, m := runSegments(t, sc, 2)

	kinds := func(r *results.Result) []string {
		var k []string
		for _, w := range r.Faults {
			k = append(k, w.Kind)
		}
		return k
	}
	if got := kinds(segs[0]); !slices.Equal(got, []string{"stall", "command", "stall"}) {
		t.Errorf("segment 0 fired %v, want its stalls and its command, and no pause of a consumer it does not run", got)
	}
	if got := kinds(segs[1]); !slices.Equal(got, []string{"command", "consumer-pause"}) {
		t.Errorf("segment 1 fired %v, want only the command given to it and its consumer's pause", got)
	}
	if p := window(t, "segment 1", segs[1].Faults, "consumer-pause", 2200*time.Millisecond); p.Target != "consumer 1" {
		t.Errorf("segment 1's pause hit %q, want consumer 1", p.Target)
	}
	for i, s := range segs {
		if s.Summary.ProduceErrors == 0 {
			t.Errorf("segment %d: no failed sends while writes were refused", i)
		}
		// Segment 0's first stall (CLIENT PAUSE) held both segments' sends.
		if s.Summary.Latency["produce"].Max < int64(200*time.Millisecond) {
			t.Errorf("segment %d: produce max %s, want the stall's wait", i, time.Duration(s.Summary.Latency["produce"].Max))
		}
		if !slices.Contains(s.Summary.NotKnown, "faults.lost") {
			t.Errorf("segment %d: not known %v, want faults.lost (a segment knows no loss)", i, s.Summary.NotKnown)
		}
	}

	if len(m.Faults) != 5 {
		t.Fatalf("merged %d windows, want every segment's five once: %+v", len(m.Faults), m.Faults)
	}
	for i := 1; i < len(m.Faults); i++ {
		if m.Faults[i].StartNs < m.Faults[i-1].StartNs-int64(5*time.Millisecond) {
			t.Errorf("merged windows out of order of their start: %+v", m.Faults)
		}
	}
	own := window(t, "segment 0", segs[0].Faults, "stall", 1200*time.Millisecond)
	stall := window(t, "the merged result", m.Faults, "stall", 1200*time.Millisecond)
	if stall.Segment == nil || *stall.Segment != 0 {
		t.Errorf("merged stall row %+v: want segment 0's", stall)
	}
	both := segs[0].Summary.ProduceErrors + segs[1].Summary.ProduceErrors
	if own.ProduceErrors == 0 || stall.ProduceErrors < own.ProduceErrors+own.ProduceErrors/2 || stall.ProduceErrors > both {
		t.Errorf("merged stall charged %d failed sends; segment 0 charged it %d of its own; both segments failed %d: want segment 1's added",
			stall.ProduceErrors, own.ProduceErrors, both)
	}
	pause := window(t, "the merged result", m.Faults, "consumer-pause", 2200*time.Millisecond)
	if pause.Segment == nil || *pause.Segment != 1 || pause.Target != "consumer 1" {
		t.Errorf("merged pause row %+v: want segment 1's, on consumer 1", pause)
	}
	if m.Summary.Latency["produce"].Count != segs[0].Summary.Latency["produce"].Count+segs[1].Summary.Latency["produce"].Count || m.Summary.Latency["produce"].Max < int64(200*time.Millisecond) {
		t.Errorf("merged produce latency %+v: want both segments' histograms", m.Summary.Latency["produce"])
	}
	var lost int64
	for _, w := range m.Faults {
		lost += w.Lost
	}
	if m.Summary.Ledger.Lost != 0 || lost != 0 || slices.Contains(m.Summary.NotKnown, "faults.lost") {
		t.Errorf("ledger %+v, windows lost %d, not known %v: nothing is lost and the windows' loss is known", m.Summary.Ledger, lost, m.Summary.NotKnown)
	}
}

// A fault given to a segment the run does not have is refused before anything runs, with the
// scenario's file, line and field (exit 2).
func TestSegmentedFaultOutOfRange(t *testing.T) {
	sc := writeFile(t, "outofrange.yaml", "name: o\nengine: redis-url\naddress: 127.0.0.1:1\nproducers: 2\nconsumers: 2\nrate: 100\nduration: 2s\nfaults:\n  - at: 500ms\n    kind: stall\n    duration: 100ms\n    segment: 2\n")
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	_, stderr, code := qbench(t, "run", sc, "--segment", "0/2", "--start-at", future)
	if want := "outofrange.yaml:12: faults.0.segment: segment 2 fires this stall, but the run has 2 segment(s), 0 to 1"; code != exitUsage || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
	// A consumer fault fires where its consumer runs: it names no segment.
	bad := writeFile(t, "consumerseg.yaml", "name: c\nengine: redis-url\naddress: 127.0.0.1:1\nconsumers: 2\nrate: 100\nduration: 2s\nfaults:\n  - {at: 500ms, kind: consumer-pause, consumer: 1, duration: 100ms, segment: 1}\n")
	if _, stderr, code := qbench(t, "validate", bad); code != exitUsage || !strings.Contains(stderr, "faults.0.segment: a consumer-pause does not take segment") {
		t.Fatalf("validate: exit %d, stderr %q", code, stderr)
	}
}
