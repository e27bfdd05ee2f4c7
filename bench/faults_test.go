package bench_test

import (
	"fmt"
	"testing"
)

// A server process killed without warning and restarted: with appendfsync always nothing that was
// acknowledged is lost; without persistence, whatever was acknowledged but not yet delivered is.
func TestServerCrash(t *testing.T) {
	cases := []struct {
		target, persistence string
		wantLoss            bool
	}{
		{"redis", "persistence:\n  appendonly: \"yes\"\n  appendfsync: always\n", false},
		{"redis", "", true},
		{"server", "", true},
	}
	for _, c := range cases {
		name := c.target + "/memory-only"
		if c.persistence != "" {
			name = c.target + "/aof-always"
		}
		t.Run(name, func(t *testing.T) {
			needTarget(t, c.target)
			res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: stream
producers: 2
consumers: 2
rate: 1000
duration: 3s
drain_timeout: 3s
faults:
  # Both consumers pause, so a backlog of about 400 messages waits in the stream at the crash.
  - {at: 1000ms, kind: consumer-pause, consumer: 0, duration: 450ms}
  - {at: 1000ms, kind: consumer-pause, consumer: 1, duration: 450ms}
  - at: 1400ms
    kind: server-crash
    duration: 300ms
%s`, c.target, c.persistence)))
			l := res.Summary.Ledger
			if l.Acked < 2500 {
				t.Fatalf("ledger %+v: writes did not resume after the restart", l)
			}
			if c.wantLoss && l.Lost < 50 {
				t.Fatalf("ledger %+v: memory only, a crash with a backlog (~400 when on schedule) must lose it", l)
			}
			// Lost messages are not lag (README: what the lag figures count): the lag read at
			// the end is what was still to come, not the messages that are gone.
			if last := res.Series[len(res.Series)-1].Lag; c.wantLoss && last >= l.Lost/2 {
				t.Fatalf("lag at the end %d with %d lost: lost messages counted as lag", last, l.Lost)
			}
			if !c.wantLoss && l.Lost != 0 {
				t.Fatalf("ledger %+v: appendfsync always must not lose an acknowledged message", l)
			}
			// The loss is charged to the crash, not to the pauses that built the backlog, and
			// writes and reads came back after it.
			if len(res.Faults) != 3 {
				t.Fatalf("fault windows %+v", res.Faults)
			}
			crash := res.Faults[2]
			if crash.Kind != "server-crash" || crash.Lost != l.Lost || crash.RecoverWriteNs < 0 || crash.RecoverReadNs < 0 {
				t.Fatalf("crash window %+v, ledger lost %d", crash, l.Lost)
			}
		})
	}
}

// Engine-side faults hold the scheduler for their duration, but they do not hold back the
// others: a consumer fault planned during a stall fires on schedule, not when the stall ends,
// and so does the stall after it, planned back to back.
func TestFaultsFireOnScheduleDuringAStall(t *testing.T) {
	res := run(t, scenario(t, `
engine: embedded
rate: 500
duration: 2500ms
warmup: 0s
drain_timeout: 2s
faults:
  - {at: 300ms, kind: stall, duration: 1200ms}
  - {at: 700ms, kind: consumer-pause, consumer: 0, duration: 200ms}
  - {at: 1500ms, kind: stall, duration: 200ms}
`))
	planned := map[string]int64{"stall": 300e6, "consumer-pause": 700e6}
	if len(res.Faults) != 3 {
		t.Fatalf("fault windows %+v", res.Faults)
	}
	for i, f := range res.Faults {
		want := planned[f.Kind]
		if i == 2 {
			want = 1500e6
		}
		if late := f.StartNs - want; late < 0 || late > 50e6 {
			t.Errorf("fault %d (%s) started at %dms, planned %dms", i, f.Kind, f.StartNs/1e6, want/1e6)
		}
	}
	for _, e := range res.Errors {
		t.Errorf("unexpected error (a late fault?): %+v", e)
	}
}
