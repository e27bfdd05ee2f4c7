package bench_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"qbench/bench"
	"qbench/results"
	"qbench/scenarios"
)

// Two groups on one stream, group 1's consumer slowed by its work for most of the run: group 1's
// lag grows into the hundreds in the per-group series and the summary while group 0's stays near
// zero; both catch up by the end. The result JSON carries both, and the summary prints them.
func TestPerGroupLagShowsTheSlowGroup(t *testing.T) {
	sc, err := scenarios.Load(libraryDir+"/designs/two-groups-one-slow.yaml", bench.Checks())
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, sc)
	pg := res.Summary.PerGroup
	if len(pg) != 2 || pg[0].Consumers != 1 || pg[1].Consumers != 1 {
		t.Fatalf("per group %+v", pg)
	}
	fast, slow := pg[0], pg[1]
	if slow.LagMax < 150 || fast.LagMax*4 > slow.LagMax {
		t.Errorf("lag max: slow group %d, fast group %d; want the slow one over 150 and 4x the fast one", slow.LagMax, fast.LagMax)
	}
	if fast.LagEnd != 0 || slow.LagEnd != 0 || fast.Delivered != res.Summary.Ledger.Acked || slow.Delivered != res.Summary.Ledger.Acked {
		t.Errorf("at the end: %+v, acked %d; want both caught up", pg, res.Summary.Ledger.Acked)
	}
	// The series: group 1's readings rise over the fault (sub-second samples every 100 ms);
	// group 0's stay low beside them.
	var peak1, at int64
	var beside0 int64
	for _, s := range res.LagSamples {
		if len(s.GroupLag) != 2 {
			t.Fatalf("sample at %d ns has group lag %v", s.AtNs, s.GroupLag)
		}
		if s.GroupLag[1] > peak1 {
			peak1, at, beside0 = s.GroupLag[1], s.AtNs, s.GroupLag[0]
		}
	}
	if peak1 < 150 || beside0*4 > peak1 {
		t.Errorf("samples: group 1 peaked at %d (at %d ns) with group 0 at %d", peak1, at, beside0)
	}
	for i, iv := range res.Series {
		if len(iv.GroupLag) != 2 {
			t.Errorf("second %d has group lag %v", i, iv.GroupLag)
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"per_group":`, `"group_lag":`, `"lag_end":`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("result JSON lacks %s", want)
		}
	}
	var sum bytes.Buffer
	if err := results.WriteSummary(&sum, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "per group") {
		t.Errorf("summary lacks the per-group table:\n%s", sum.String())
	}
}

// Pending at the end, per consumer: consumer 1 dies after the work of a batch, before
// acknowledging it, and stays down; what it held is still its own in the stream group's PEL (no
// claim_idle) or its processing list (a visibility timeout longer than the run), so it shows
// pending > 0 and the others 0. A plain list keeps no such record: n/a. The stream runs on a real
// redis-server too (XPENDING's summary form read back from Redis 7.0).
func TestPendingAtEndPerConsumer(t *testing.T) {
	for _, tc := range []struct {
		engine, design, section string
		known                   bool
	}{
		{"embedded", "stream", "redis:\n  stream: {count: 10}", true},
		{"redis", "stream", "redis:\n  stream: {count: 10}", true},
		{"embedded", "reliable-list", "redis:\n  list: {visibility_timeout: 60s}", true},
		{"embedded", "list", "", false},
	} {
		t.Run(tc.engine+"/"+tc.design, func(t *testing.T) {
			needTarget(t, tc.engine)
			res := run(t, scenario(t, `
engine: `+tc.engine+`
design: `+tc.design+`
producers: 1
consumers: 3
rate: 500
duration: 1s
drain_timeout: 300ms
`+tc.section+`
faults:
  - {at: 300ms, kind: consumer-crash, consumer: 1}
`))
			pc := res.Summary.PerConsumer
			if len(pc) != 3 {
				t.Fatalf("per consumer %+v", pc)
			}
			for _, c := range pc {
				switch {
				case !tc.known:
					if c.Pending != nil {
						t.Errorf("consumer %d: pending %d, want n/a on %s", c.Consumer, *c.Pending, tc.design)
					}
				case c.Pending == nil:
					t.Errorf("consumer %d: pending n/a on %s", c.Consumer, tc.design)
				case c.Consumer == 1 && *c.Pending == 0:
					t.Errorf("the crashed consumer holds nothing pending")
				case c.Consumer != 1 && *c.Pending != 0:
					t.Errorf("consumer %d: pending %d, want 0", c.Consumer, *c.Pending)
				}
			}
			var sum bytes.Buffer
			if err := results.WriteSummary(&sum, res); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(sum.String(), "pending at end") || tc.known == strings.Contains(sum.String(), "pending n/a") {
				t.Errorf("summary's pending column:\n%s", sum.String())
			}
		})
	}
}
