package bench_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"qbench/bench"
	"qbench/engines/redisq"
	"qbench/results"
)

// A mark is checked on its own before any run sees it: each bad field is named.
func TestMarkValidate(t *testing.T) {
	cases := []struct {
		name string
		m    bench.Mark
		want string // "" for valid
	}{
		{"valid", bench.Mark{Kind: "network-partition", Target: "node-2", Action: "start"}, ""},
		{"a kind of qbench's own", bench.Mark{Kind: "server-crash", Target: "redis-0", Action: "end"}, ""},
		{"unknown kind", bench.Mark{Kind: "meteor", Target: "node-2", Action: "start"}, `kind: unknown fault kind "meteor" (one of stall, `},
		{"consumer-side kind", bench.Mark{Kind: "consumer-pause", Target: "c", Action: "start"}, `kind: unknown fault kind "consumer-pause"`},
		{"no kind", bench.Mark{Target: "node-2", Action: "start"}, "kind: missing"},
		{"no target", bench.Mark{Kind: "pod-kill", Target: " ", Action: "start"}, "target: missing"},
		{"bad action", bench.Mark{Kind: "pod-kill", Target: "p", Action: "begin"}, `action: "begin", want start or end`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.m.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("valid mark refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// Marks the run's state refuses, with an error that says why: outside the run (before its load
// began, after its consumers stopped), an end before its start, a start of a fault still open.
// The marks that are accepted in between leave one window, ended.
func TestMarkRefusals(t *testing.T) {
	board := bench.NewMarkBoard()
	pre := bench.Mark{Kind: "pod-kill", Target: "redis-0", Action: "start"}
	if _, err := board.Record(pre); !errors.Is(err, bench.ErrMarkConflict) || !strings.Contains(err.Error(), "outside the run: no run's load has begun yet") {
		t.Fatalf("a mark before any run: %v", err)
	}
	type step struct {
		m    bench.Mark
		want string // "" accepted
	}
	steps := []step{
		{bench.Mark{Kind: "pod-kill", Target: "redis-0", Action: "end"}, "pod-kill on redis-0: an end with no start in this run"},
		{bench.Mark{Kind: "pod-kill", Target: "redis-0", Action: "start"}, ""},
		{bench.Mark{Kind: "pod-kill", Target: "redis-0", Action: "start"}, "pod-kill on redis-0: already started at"},
		{bench.Mark{Kind: "pod-kill", Target: "redis-1", Action: "end"}, "an end with no start in this run (mark its start first); open now: pod-kill on redis-0"},
		{bench.Mark{Kind: "pod-kill", Target: "redis-0", Action: "end"}, ""},
		{bench.Mark{Kind: "pod-kill", Target: "redis-0", Action: "end"}, "an end with no start"},
	}
	var got []string
	sc := scenario(t, "engine: nullq\nrate: 200\nduration: 2s\n")
	var fired bool
	res, err := bench.Run(context.Background(), context.Background(), sc, bench.Options{Marks: board, Progress: func(bench.Progress) {
		if fired {
			return
		}
		fired = true
		for _, s := range steps {
			_, err := board.Record(s.m)
			got = append(got, fmt.Sprint(err))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		if s.want == "" && got[i] != "<nil>" || s.want != "" && !strings.Contains(got[i], s.want) {
			t.Errorf("step %d (%s %s on %s): %s, want %q", i, s.m.Action, s.m.Kind, s.m.Target, got[i], s.want)
		}
	}
	if len(res.Faults) != 1 || !res.Faults[0].Marked || res.Faults[0].EndNs <= res.Faults[0].StartNs {
		t.Fatalf("faults %+v, want one marked window, ended", res.Faults)
	}
	if _, err := board.Record(pre); err == nil || !strings.Contains(err.Error(), "outside the run: run "+res.RunID+"'s load is over") {
		t.Fatalf("a mark after the run: %v", err)
	}
}

// A fault something else injected into a redis-server reached through redis-url (writes refused
// with OOM while maxmemory is 1 byte), marked from the outside, is costed as qbench's own faults
// are: every failed send is charged to the marked window, the first write after its end is its
// write recovery, nothing is lost, and the trust verdict notes the mark rather than flagging the
// failures as outside any fault.
func TestMarkedFaultIsCosted(t *testing.T) {
	needTarget(t, "redis")
	ctx := context.Background()
	srv, client := startRedisWithClient(t)
	if err := client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	sc := scenario(t, fmt.Sprintf("engine: redis-url\naddress: %s\ndesign: stream\nproducers: 1\nconsumers: 1\nrate: 500\nduration: 4s\nseed: 3\n", srv.Addr()))
	board := bench.NewMarkBoard()
	mark := func(action string) {
		if _, err := board.Record(bench.Mark{Kind: "memory-stress", Target: "redis-0", Action: action}); err != nil {
			t.Errorf("mark %s: %v", action, err)
		}
	}
	// The sampler's once-a-second progress paces the outside fault: no sleeps.
	var ticks int
	res, err := bench.Run(ctx, ctx, sc, bench.Options{Marks: board, Progress: func(bench.Progress) {
		ticks++
		switch ticks {
		case 1:
			mark("start")
			if err := client.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
				t.Error(err)
			}
		case 2:
			if err := client.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
				t.Error(err)
			}
			mark("end")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) != 1 {
		t.Fatalf("faults %+v, want the one marked", res.Faults)
	}
	f := res.Faults[0]
	if !f.Marked || f.Kind != "memory-stress" || f.Target != "redis-0" {
		t.Errorf("fault row %+v, want marked memory-stress on redis-0", f)
	}
	if f.ProduceErrors == 0 || f.ProduceErrors != res.Summary.ProduceErrors {
		t.Errorf("produce errors charged to the mark %d of %d, want all of them and some", f.ProduceErrors, res.Summary.ProduceErrors)
	}
	if f.RecoverWriteNs < 0 || f.RecoverReadNs < 0 || f.EndNs-f.StartNs < 500e6 {
		t.Errorf("window %s..%s, recovered write %d read %d", results.FormatNs(f.StartNs), results.FormatNs(f.EndNs), f.RecoverWriteNs, f.RecoverReadNs)
	}
	if f.Lost != 0 || res.Summary.Ledger.Lost != 0 {
		t.Errorf("lost %d (window %d): a refused write was never acknowledged", res.Summary.Ledger.Lost, f.Lost)
	}
	tr := results.Assess(res)
	codes := strings.Join(tr.Codes(), ",")
	if !strings.Contains(codes, results.CodeMarkedFaults) {
		t.Errorf("trust %s lacks %s", codes, results.CodeMarkedFaults)
	}
	for _, fl := range tr.Suspect() {
		if fl.Code == results.CodeFailedSends {
			t.Errorf("failed sends flagged as outside any fault: %s", fl.Text)
		}
	}
	var sum strings.Builder
	if err := results.WriteSummary(&sum, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "memory-stress (marked)") {
		t.Errorf("summary does not show the marked fault:\n%s", sum.String())
	}
	t.Logf("marked window %s for %s: %d produce errors, write back after %s", results.FormatNs(f.StartNs),
		results.FormatNs(f.EndNs-f.StartNs), f.ProduceErrors, results.FormatNs(f.RecoverWriteNs))
}

// A scenario's stall on redis-url, against a redis-server that refuses DEBUG (as most servers
// someone else runs do): carried out by CLIENT PAUSE ALL, the window has no error, the facts say
// how, and the messages scheduled during it waited it out (produce max about the stall).
func TestRedisURLStall(t *testing.T) {
	needTarget(t, "redis")
	ctx := context.Background()
	srv, err := redisq.StartRedis(ctx, t.TempDir(), map[string]string{"enable-debug-command": "no"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	sc := scenario(t, fmt.Sprintf("engine: redis-url\naddress: %s\ndesign: stream\nrate: 500\nduration: 2500ms\nseed: 3\nfaults:\n  - {at: 1s, kind: stall, duration: 500ms}\n", srv.Addr()))
	res, err := bench.Run(ctx, ctx, sc, bench.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) != 1 || res.Faults[0].Error != "" || res.Faults[0].RecoverWriteNs < 0 {
		t.Fatalf("faults %+v, want the stall carried out and writes back after it", res.Faults)
	}
	if got := res.Engine.Settings["stall_by"]; got != "client-pause" {
		t.Errorf("stall_by %q, want client-pause", got)
	}
	if max := res.Summary.Latency["produce"].Max; max < int64(400*time.Millisecond) {
		t.Errorf("produce max %s: the messages sent during the 500ms pause did not wait", results.FormatNs(max))
	}
	if res.Summary.Ledger.Lost != 0 || res.Summary.ProduceErrors != 0 {
		t.Errorf("lost %d, produce errors %d: a pause delays, it refuses nothing", res.Summary.Ledger.Lost, res.Summary.ProduceErrors)
	}
}
