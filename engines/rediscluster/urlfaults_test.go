package rediscluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/bench"
	"qbench/engines"
	"qbench/engines/rediscluster"
	"qbench/results"
	"qbench/scenarios"
)

// Faults on redis-cluster-url run end to end through the runner against a cluster the test
// starts on loopback, addressed by its seed nodes as any existing cluster would be.

// needCluster fails under CI=true, and skips elsewhere, when redis-server or redis-cli is missing.
func needCluster(t *testing.T) {
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

// startCluster starts a managed cluster of 3 primaries with replicas each, stopped at cleanup.
func startCluster(t *testing.T, replicas int) *rediscluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	began := time.Now()
	c, err := rediscluster.StartCluster(ctx, rediscluster.DefaultPrimaries, replicas, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d-node cluster healthy in %s", len(c.Nodes), time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() { c.Stop() })
	return c
}

// runURL runs a scenario on redis-cluster-url at the cluster's seeds with the given faults.
func runURL(t *testing.T, c *rediscluster.Cluster, duration, faults string) *results.Result {
	t.Helper()
	yaml := fmt.Sprintf(`name: url-fault
engine: redis-cluster-url
address: %s
design: stream
producers: 2
consumers: 3
rate: 400
batch: 4
duration: %s
drain_timeout: 5s
faults:
%s`, strings.Join(c.Addrs(), ","), duration, faults)
	sc, err := scenarios.Parse("url-fault.yaml", []byte(yaml), bench.Checks())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := bench.Run(ctx, ctx, sc, bench.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) != 1 {
		t.Fatalf("%d fault rows, want 1: %+v", len(res.Faults), res.Faults)
	}
	f := res.Faults[0]
	t.Logf("fault %s on %s: %s to %s, error %q, recover write %d ns, lost %d, produce errors %d",
		f.Kind, f.Target, time.Duration(f.StartNs), time.Duration(f.EndNs), f.Error, f.RecoverWriteNs, f.Lost, f.ProduceErrors)
	if f.Error != "" {
		t.Fatalf("fault failed: %s", f.Error)
	}
	return res
}

// primary-kill on redis-cluster-url: the primary of shard 1 is shut down through the API
// (SHUTDOWN NOSAVE NOW), its replica is promoted, the fault's row shows the window from the
// kill to the promotion, names the node, says it was not restarted, and writes resume after
// it. The node stays down. Then a user who may neither SHUTDOWN nor DEBUG is refused.
func TestURLPrimaryKill(t *testing.T) {
	needCluster(t)
	c := startCluster(t, 1)
	res := runURL(t, c, "7s", "  - {at: 2s, kind: primary-kill, shard: 1}\n")
	f := res.Faults[0]
	if f.EndNs <= f.StartNs || time.Duration(f.EndNs-f.StartNs) > 20*time.Second {
		t.Errorf("window %d..%d ns: want it to end after it began, at the promotion", f.StartNs, f.EndNs)
	}
	for _, want := range []string{"SHUTDOWN NOSAVE NOW", "not restarted", "primary now 127.0.0.1:"} {
		if !strings.Contains(f.Target, want) {
			t.Errorf("target %q lacks %q", f.Target, want)
		}
	}
	if f.RecoverWriteNs < 0 {
		t.Errorf("no write acknowledged after the promotion (recover_write_ns %d)", f.RecoverWriteNs)
	}
	// Exactly one node is gone: the one the row names.
	down := 0
	for _, n := range c.Nodes {
		cl := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1, DialTimeout: 300 * time.Millisecond})
		if cl.Ping(context.Background()).Err() != nil {
			down++
			if !strings.Contains(f.Target, "primary "+n.Addr()+" ") {
				t.Errorf("node %s is down, but the row names %q", n.Addr(), f.Target)
			}
		}
		cl.Close()
	}
	if down != 1 {
		t.Errorf("%d nodes down after the kill, want 1", down)
	}

	// A user who may neither SHUTDOWN nor DEBUG is refused before the run, both reasons named.
	ctx := context.Background()
	var live []string
	for _, n := range c.Nodes {
		cl := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1, DialTimeout: 300 * time.Millisecond})
		if cl.Do(ctx, "ACL", "SETUSER", "default", "-shutdown", "-debug").Err() == nil {
			live = append(live, n.Addr())
		}
		cl.Close()
	}
	reg, err := engines.Lookup("redis-cluster-url")
	if err != nil {
		t.Fatal(err)
	}
	e, err := reg.New(ctx, engines.Spec{RunID: "noperm", Design: "stream", Producers: 1, Consumers: 1,
		Address: strings.Join(live, ","), Faults: []string{"primary-kill"}, FaultShards: map[string][]int{"primary-kill": {0}}})
	if err == nil {
		e.Close()
		t.Fatal("a user without SHUTDOWN and DEBUG was accepted for primary-kill")
	}
	t.Log(err)
	for _, want := range []string{"refuses both ways to kill it", "SHUTDOWN (probed with SHUTDOWN ABORT): ", "NOPERM"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
}

// Before the run, redis-cluster-url refuses a primary-kill on a shard whose primary has no
// replica, and a stall where the user may not CLIENT PAUSE (NOPERM), naming the node and the
// reason. (A user who may not kill a primary: TestURLPrimaryKill.)
func TestURLFaultRefusals(t *testing.T) {
	needCluster(t)
	c := startCluster(t, 0)
	ctx := context.Background()
	reg, err := engines.Lookup("redis-cluster-url")
	if err != nil {
		t.Fatal(err)
	}
	try := func(faults ...string) error {
		spec := engines.Spec{RunID: "refuse", Design: "stream", Producers: 1, Consumers: 1,
			Address: strings.Join(c.Addrs(), ","), Faults: faults}
		e, err := reg.New(ctx, spec)
		if err == nil {
			e.Close()
		}
		return err
	}
	err = try("primary-kill")
	if err == nil || !strings.Contains(err.Error(), "has no replica to promote") {
		t.Fatalf("primary-kill on a cluster without replicas: %v, want a refusal naming the missing replica", err)
	}
	t.Log(err)
	// A default user without CLIENT PAUSE on every node.
	for _, a := range c.Addrs() {
		cl := redis.NewClient(&redis.Options{Addr: a})
		err := cl.Do(ctx, "ACL", "SETUSER", "default", "-client|pause").Err()
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	err = try("primary-kill", "stall")
	if err == nil {
		t.Fatal("a user without CLIENT PAUSE was accepted for a stall")
	}
	t.Log(err)
	for _, want := range []string{"has no replica to promote", "a stall is CLIENT PAUSE <ms> ALL on every primary", "NOPERM"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
}
