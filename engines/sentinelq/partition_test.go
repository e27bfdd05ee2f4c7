package sentinelq_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"qbench/bench"
	"qbench/engines"
	_ "qbench/engines/sentinelq"
	"qbench/results"
	"qbench/scenarios"
)

// The library's sentinel-partition scenario, both cells, asserted: the article's case of a
// standalone primary partitioned while its clients still reach it. Without min-replicas-to-write
// the old primary acknowledges writes for the whole partition and they are lost at the heal,
// every one charged to the partition; with min-replicas-to-write 1 and min-replicas-max-lag 1 it
// refuses writes (NOREPLICAS) once its replicas' acknowledgements are over a second old, so it
// loses fewer. The cells run one after the other (each starts 3 servers and 3 Sentinels).
func TestSentinelPartition(t *testing.T) {
	reg, err := engines.Lookup("redis-sentinel")
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.CanRun(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("engine redis-sentinel is required under CI=true: %v", err)
		}
		t.Skip(err)
	}
	sc, err := scenarios.Load("../../scenarios/library/failures/sentinel-partition.yaml", bench.Checks())
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	lost := map[string]int64{}
	for _, c := range cells {
		minReplicas := c.Scenario.Persistence["min-replicas-to-write"]
		t.Run(c.Name, func(t *testing.T) {
			ctx := context.Background()
			r, err := bench.Run(ctx, ctx, c.Scenario, bench.Options{Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			results.WriteSummary(&buf, r)
			t.Logf("\n%s", buf.String())
			var f *results.FaultWindow
			for i := range r.Faults {
				if r.Faults[i].Kind == "partition" {
					f = &r.Faults[i]
				}
			}
			if f == nil {
				t.Fatalf("no partition window in %+v", r.Faults)
			}
			l := r.Summary.Ledger
			noReplicas := errorsLike(r, "NOREPLICAS")
			t.Logf("min-replicas-to-write %s: %s; acked %d, lost %d (charged to the partition %d), produce errors %d (NOREPLICAS %d), writes again %s after the heal",
				minReplicas, f.Target, l.Acked, l.Lost, f.Lost, f.ProduceErrors, noReplicas, results.FormatNs(f.RecoverWriteNs))
			if f.Error != "" || !strings.Contains(f.Target, "primary now") || strings.Contains(f.Target, "no failover") {
				t.Fatalf("the partition did not end in a failover: %q, error %q", f.Target, f.Error)
			}
			if l.Lost == 0 || f.Lost != l.Lost {
				t.Errorf("lost %d, %d of them charged to the partition; want some, all charged to it", l.Lost, f.Lost)
			}
			if f.RecoverWriteNs < 0 {
				t.Errorf("no write acknowledged after the heal")
			}
			// The heal closes the clients' connections before the old primary turns replica.
			if n := errorsLike(r, "READONLY"); n != 0 {
				t.Errorf("%d writes answered READONLY: a client reached the old primary after it became a replica", n)
			}
			if minReplicas == "1" && noReplicas == 0 {
				t.Errorf("min-replicas-to-write 1: no NOREPLICAS among the produce errors %+v", r.Errors)
			}
			if minReplicas == "0" && noReplicas != 0 {
				t.Errorf("min-replicas-to-write 0: %d NOREPLICAS errors", noReplicas)
			}
			lost[minReplicas] = l.Lost
		})
	}
	if a, b := lost["0"], lost["1"]; a != 0 && b != 0 && b >= a {
		t.Errorf("min-replicas-to-write 1 lost %d, not fewer than the %d lost without it", b, a)
	}
}

// errorsLike counts the errors whose message contains s.
func errorsLike(r *results.Result, s string) int64 {
	var n int64
	for _, e := range r.Errors {
		if strings.Contains(e.Message, s) {
			n += e.Count
		}
	}
	return n
}
