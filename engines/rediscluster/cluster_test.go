package rediscluster

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"qbench/engines"
)

// needRedis fails under CI=true, and skips elsewhere, when redis-server or redis-cli is missing.
func needRedis(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI=true: %v", bin, err)
			}
			t.Skipf("%s not installed: %v", bin, err)
		}
	}
}

func gone(pid int) bool { return syscall.Kill(pid, 0) != nil }

// A managed cluster is 3 primaries and 3 replicas, healthy; the shards' keys land on three
// different primaries; a primary kill promotes its replica and the shard's slot moves; Stop
// leaves no node running.
func TestClusterShardsSpreadAndFailover(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	c, err := StartCluster(ctx, DefaultPrimaries, 1, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("6-node cluster healthy in %s", time.Since(start).Round(time.Millisecond))
	var pids []int
	for _, n := range c.Nodes {
		pids = append(pids, n.PID())
	}
	defer func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
		for _, pid := range pids {
			if !gone(pid) {
				t.Errorf("node %d still running after Stop", pid)
			}
		}
	}()
	if len(c.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(c.Nodes))
	}
	for _, design := range []string{"stream", "reliable-list"} {
		e, err := newEngine(ctx, engines.Spec{RunID: "t-" + design, Design: design, Producers: 1, Consumers: 3}, "redis-cluster-url", c.Addrs(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(e.shards) != 3 {
			t.Fatalf("%s: %d shards, want one per primary (3)", design, len(e.shards))
		}
		owners := map[string]bool{}
		for _, s := range e.shards {
			p, err := c.PrimaryFor(ctx, s.slot)
			if err != nil {
				t.Fatal(err)
			}
			owners[p.Addr()] = true
		}
		if len(owners) != 3 {
			t.Errorf("%s: shards on %d primaries, want 3 (slots %v)", design, len(owners), e.shards)
		}
		for id := range 3 {
			if got := e.shardsOf(id); len(got) != 1 || got[0] != id {
				t.Errorf("consumer %d reads shards %v, want [%d]", id, got, id)
			}
		}
		e.Close()
	}

	e := &engine{cluster: c, shards: []shard{{slot: 0}}}
	old, err := c.PrimaryFor(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := e.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	now, err := c.PrimaryFor(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if now == old {
		t.Fatalf("slot 0 still on %s after its primary was killed", old.Addr())
	}
	t.Logf("replica %s promoted %s after the kill of %s", now.Addr(), time.Since(start).Round(time.Millisecond), old.Addr())
}

// A fault's shard: picks the slot whose primary is hit; out of range falls back to shard 0.
func TestTargetShard(t *testing.T) {
	e := &engine{shards: []shard{{slot: 10}, {slot: 6000}, {slot: 12000}}}
	for _, tc := range []struct{ shard, slot int }{{0, 10}, {2, 12000}, {1, 6000}, {7, 10}} {
		e.TargetShard(tc.shard)
		if got := e.targetSlot(); got != tc.slot {
			t.Errorf("shard %d: slot %d, want %d", tc.shard, got, tc.slot)
		}
	}
}

// Consumers are dealt shards so that every shard has a reader in every group.
func TestShardsOf(t *testing.T) {
	for _, tc := range []struct {
		consumers, shards int
		want              [][]int
	}{
		{1, 3, [][]int{{0, 1, 2}}},
		{2, 3, [][]int{{0, 2}, {1}}},
		{3, 3, [][]int{{0}, {1}, {2}}},
		{4, 3, [][]int{{0}, {1}, {2}, {0}}},
	} {
		e := &engine{spec: engines.Spec{Consumers: tc.consumers, Design: "list"}}
		for range tc.shards {
			e.shards = append(e.shards, shard{d: mustDesign(t, "list")})
		}
		for id, want := range tc.want {
			got := e.shardsOf(id)
			if len(got) != len(want) {
				t.Errorf("%d consumers, %d shards: consumer %d reads %v, want %v", tc.consumers, tc.shards, id, got, want)
				continue
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%d consumers, %d shards: consumer %d reads %v, want %v", tc.consumers, tc.shards, id, got, want)
				}
			}
		}
	}
}
