package rediscluster

import (
	"context"

	"github.com/redis/go-redis/v9"
	"strings"
	"testing"
	"time"

	"qbench/engines/redisq"
)

// A partition of one primary on a 6-node cluster: the primary, reached directly, acknowledges a
// write alone; it then notices it is in the minority (CLUSTERDOWN) while the majority promotes
// its replica; after Heal it has rejoined as a replica, the write it acknowledged alone is gone,
// and Stop leaves no proxy listening.
func TestPartitionPrimary(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := StartCluster(ctx, DefaultPrimaries, 1, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	key := redisq.ShardKey("part", 0, 3) + ":k"
	slot := redisq.Slot(key)
	e := &engine{cluster: c, shards: []shard{{slot: slot, key: key}}}
	old, err := c.PrimaryFor(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	// Replicated before the cut: survives.
	if _, err := nodeDo(ctx, old.Addr(), "SET", key+":before", "1"); err != nil {
		t.Fatal(err)
	}
	if n, err := nodeInt(ctx, old.Addr(), "WAIT", 1, 2000); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d, %v", n, err)
	}
	target, err := e.Partition(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	if !strings.Contains(target, old.Addr()) {
		t.Errorf("partition hit %q, want the primary %s", target, old.Addr())
	}
	// The client still reaches the primary, which acknowledges alone.
	if v, err := nodeDo(ctx, old.Addr(), "SET", key, "alone"); err != nil || v != "OK" {
		t.Fatalf("write to the partitioned primary: %q, %v", v, err)
	}
	// It stops accepting writes once it sees it is in the minority.
	var refused time.Duration
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := nodeDo(ctx, old.Addr(), "SET", key+":late", "x"); err != nil && strings.Contains(err.Error(), "CLUSTERDOWN") {
			refused = time.Since(cut)
			break
		}
	}
	if refused == 0 {
		t.Fatal("the partitioned primary kept accepting writes for 15 s")
	}
	// The majority promotes its replica (the old primary still claims the slot in its own view,
	// so ask the others).
	var promoted *redisq.ManagedRedis
	for deadline := time.Now().Add(20 * time.Second); promoted == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, n := range c.Nodes {
			if n == old {
				continue
			}
			if addr, err := primaryFor(ctx, n.Addr(), slot); err == nil && c.Node(addr) != nil && c.Node(addr) != old {
				promoted = c.Node(addr)
			}
		}
	}
	if promoted == nil {
		t.Fatal("no replica promoted by the majority within 20 s")
	}
	t.Logf("partitioned primary refused writes after %s; %s promoted after %s",
		refused.Round(time.Millisecond), promoted.Addr(), time.Since(cut).Round(time.Millisecond))
	now, err := e.Heal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Node(now) != promoted {
		t.Fatalf("after the heal slot %d is on %s, want the promoted %s", slot, now, promoted.Addr())
	}
	// The old primary rejoins as a replica and the write it acknowledged alone is lost.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		repl, err := nodeDo(ctx, old.Addr(), "INFO", "replication")
		if err == nil && strings.Contains(repl, "role:slave") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old primary did not rejoin as a replica: %q, %v", repl, err)
		}
	}
	if v, err := nodeDo(ctx, promoted.Addr(), "GET", key+":before"); err != nil || v != "1" {
		t.Errorf("the write replicated before the cut: %q, %v", v, err)
	}
	if n, err := nodeInt(ctx, promoted.Addr(), "EXISTS", key); err != nil || n != 0 {
		t.Errorf("the write acknowledged by the partitioned primary alone survived: EXISTS %d, %v", n, err)
	}
	if err := c.Stop(); err != nil {
		t.Error(err)
	}
	for _, p := range c.Links.proxies {
		if _, err := nodeDo(ctx, "127.0.0.1:"+itoa(p.announce), "PING"); err == nil {
			t.Errorf("proxy %d still answers after Stop", p.announce)
		}
	}
}

func nodeInt(ctx context.Context, addr string, args ...any) (int64, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2})
	defer c.Close()
	return c.Do(ctx, args...).Int64()
}
