package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"qbench/engines/rediscluster"
)

// The proof: two qbench processes run the segments of one run against a Redis Cluster
// the test starts (addressed by its seed nodes, redis-cluster-url), and segment 0 alone kills the
// primary of shard 1 (SHUTDOWN through the API; the cluster promotes its replica). The merged
// result has the kill once, fired by segment 0, and its window is charged the failed sends of
// both segments (segment 1's producer writes to the dead primary too) and every loss the joined
// ledger found.
func TestSegmentedPrimaryKillCostsBothSegments(t *testing.T) {
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI=true: %v", bin, err)
			}
			t.Skipf("%s not installed: %v", bin, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := rediscluster.StartCluster(ctx, rediscluster.DefaultPrimaries, 1, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	sc := writeFile(t, "segkill.yaml", fmt.Sprintf(`name: segkill
engine: redis-cluster-url
address: %s
design: stream
producers: 2
consumers: 2
rate: 400
batch: 4
duration: 4s
warmup: 0s
drain_timeout: 3s
seed: 5
faults:
  - {at: 1s, kind: primary-kill, shard: 1}
`, strings.Join(c.Addrs(), ",")))
	segs, m := runSegments(t, sc, 2)

	if len(segs[0].Faults) != 1 || segs[0].Faults[0].Kind != "primary-kill" || len(segs[1].Faults) != 0 {
		t.Fatalf("segment 0 fired %+v, segment 1 %+v: want the kill in segment 0 only", segs[0].Faults, segs[1].Faults)
	}
	own := segs[0].Faults[0]
	if own.Error != "" {
		t.Fatalf("the kill failed: %s", own.Error)
	}
	if len(m.Faults) != 1 {
		t.Fatalf("merged windows %+v, want the kill once", m.Faults)
	}
	k := m.Faults[0]
	if k.Segment == nil || *k.Segment != 0 || !strings.Contains(k.Target, "SHUTDOWN") {
		t.Errorf("merged kill row %+v: want segment 0's, naming how the primary was killed", k)
	}
	for i, s := range segs {
		t.Logf("segment %d: produce errors %d", i, s.Summary.ProduceErrors)
	}
	if segs[1].Summary.ProduceErrors == 0 {
		t.Fatalf("segment 1's sends never failed while shard 1 had no primary: nothing to charge across segments")
	}
	both := segs[0].Summary.ProduceErrors + segs[1].Summary.ProduceErrors
	if k.ProduceErrors <= own.ProduceErrors || k.ProduceErrors > both {
		t.Errorf("the merged kill is charged %d failed sends, segment 0's own row %d, both segments failed %d: want segment 1's added",
			k.ProduceErrors, own.ProduceErrors, both)
	}
	// Every loss the joined ledger found is the kill's (the one window), whichever segment sent it.
	if k.Lost != m.Summary.Ledger.Lost {
		t.Errorf("the kill is charged %d lost, the joined ledger lost %d", k.Lost, m.Summary.Ledger.Lost)
	}
	t.Logf("merged kill: %s to %s, lost %d, duplicates %d, produce errors %d (segment 0's own %d)",
		time.Duration(k.StartNs), time.Duration(k.EndNs), k.Lost, k.Duplicates, k.ProduceErrors, own.ProduceErrors)
}
