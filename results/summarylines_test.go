package results_test

import (
	"strings"
	"testing"
	"time"

	"qbench/results"
	"qbench/results/resultstest"
)

// The text summary carries a fault's loss window and last durable point, and one line of engine
// health, when the result has them; neither line when it does not.
func TestSummaryShowsLossWindowAndHealth(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	r := resultstest.Make(resultstest.Options{Seconds: 3})
	var plain strings.Builder
	if err := results.WriteSummary(&plain, r); err != nil {
		t.Fatal(err)
	}
	for _, no := range []string{"loss window", "engine health"} {
		if strings.Contains(plain.String(), no) {
			t.Errorf("a run without faults or health shows %q:\n%s", no, plain.String())
		}
	}
	r.Faults = []results.FaultWindow{
		{Kind: "consumer-pause", Target: "consumer 0", StartNs: ms(1000), EndNs: ms(2000), LastDurableNs: -1},
		{Kind: "server-crash", Target: "server", StartNs: ms(2000), EndNs: ms(2300), Lost: 998, LossWindowNs: ms(998), LastDurableNs: ms(1001)},
		{Kind: "power-loss", Target: "server", StartNs: ms(2500), EndNs: ms(2600), Lost: 4, LastDurableNs: -1},
	}
	health := func(mem, forks int64, aof string) *results.EngineHealth {
		return &results.EngineHealth{Counters: map[string]int64{"used_memory": mem, "total_forks": forks, "evicted_keys": 0},
			Status: map[string]string{"aof_last_write_status": aof, "rdb_last_bgsave_status": "ok"}}
	}
	r.Series[0].Health = health(1<<20, 0, "ok")
	r.Series[1].Health = health(3<<20, 1, "err")
	r.Series[2].Health = health(2<<20, 1, "ok")
	r.Series[2].Health.Events = []results.LatencyEvent{{Name: "fork", MaxMs: 12}}
	var b strings.Builder
	if err := results.WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"loss window: server-crash at 2.00s lost 998 acknowledged messages, the oldest intended 998.00ms before it; last durable point 1.00s\n",
		"loss window: power-loss at 2.50s lost 4 acknowledged messages, all intended during it; no earlier message survived\n",
		"engine health (3 readings): total_forks +1, used_memory max 3.00 MiB; aof_last_write_status ok/err; latency events: fork max 12ms\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary without %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "loss window: consumer-pause") {
		t.Errorf("a fault that lost nothing has a loss window line:\n%s", b.String())
	}
}
