package bench_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"qbench/engines/rediscluster"
)

// Every Redis design on a 6-node Redis Cluster (3 primaries, 3 replicas), sharded over the
// primaries: every acknowledged message delivered, none lost, none twice. One cluster serves all
// designs through redis-cluster-url (starting one takes seconds); the managed engine itself runs
// in the failure scenarios (cluster-*.yaml) and in TestClusterNodeRestart.
func TestClusterDesignsLoseNothing(t *testing.T) {
	needTarget(t, "redis-cluster")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := rediscluster.StartCluster(ctx, rediscluster.DefaultPrimaries, 1, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	for _, tc := range []struct {
		design, extra string
		groups        int
	}{
		{"stream", "", 1},
		{"stream", "redis:\n  stream: {groups: 2}\n", 2},
		{"list", "redis:\n  list: {count: 16}\n", 1},
		{"reliable-list", "", 1},
		{"pubsub", "", 2},
	} {
		t.Run(tc.design+fmt.Sprint(tc.groups), func(t *testing.T) {
			sc := scenario(t, fmt.Sprintf(`
engine: redis-cluster-url
address: %s
design: %s
producers: 2
consumers: 2
rate: 1500
duration: 2s
warmup: 500ms
batch: 4
%s`, strings.Join(c.Addrs(), ","), tc.design, tc.extra))
			r := run(t, sc)
			l := r.Summary.Ledger
			if l.Acked != 3000 || l.Delivered != l.Acked*int64(tc.groups) || l.Lost != 0 || l.Duplicates != 0 {
				t.Errorf("ledger %+v: want 3000 acked, each delivered once to each of %d groups", l, tc.groups)
			}
			if r.Engine.Settings["shards"] != "3" {
				t.Errorf("shards %q, want one per primary", r.Engine.Settings["shards"])
			}
		})
	}
}

// node-restart on the managed cluster: the primary of shard 1 is killed and comes back on its
// data directory after 4 s (by then its replica has been promoted, after cluster-node-timeout and
// an election, and it rejoins as the new primary's replica). Writes to that shard fail until the
// promotion; the run recovers.
func TestClusterNodeRestart(t *testing.T) {
	needTarget(t, "redis-cluster")
	sc := scenario(t, `
engine: redis-cluster
design: list
producers: 2
consumers: 3
rate: 1500
duration: 10s
warmup: 500ms
batch: 8
faults:
  - at: 2s
    kind: node-restart
    duration: 4s
    shard: 1
`)
	r := run(t, sc)
	f := faultOf(t, r, "node-restart")
	l := r.Summary.Ledger
	t.Logf("node-restart: lost %d, duplicates %d, failed %d, window %s", l.Lost, l.Duplicates, l.Failed, time.Duration(f.EndNs-f.StartNs))
	if f.Error != "" || f.RecoverWriteNs < 0 || l.Failed == 0 || l.Acked < 10000 {
		t.Errorf("fault %+v, ledger %+v: want failed writes during the restart and writes after it", f, l)
	}
}
