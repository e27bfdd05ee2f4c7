package redisq_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/bench"
	"qbench/engines"
	"qbench/engines/redisq"
	"qbench/scenarios"
)

// needRedisServer fails under CI=true, and skips elsewhere, without redis-server.
func needRedisServer(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is required under CI=true: %v", err)
		}
		t.Skipf("redis-server not installed: %v", err)
	}
}

// startRedis starts a redis-server for the test, stopped at cleanup.
func startRedis(t *testing.T, cfg map[string]string) *redisq.ManagedRedis {
	t.Helper()
	s, err := redisq.StartRedis(context.Background(), t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

// role is the server's INFO replication role.
func role(t *testing.T, addr string) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	return redisq.InfoField(info, "role")
}

// leader-move on redis-url is FAILOVER on a real redis-server with a replica: before the run, a
// primary without a replica is refused, naming why; with one, the fault's row shows the window
// from FAILOVER until the replica is primary, names both servers, loses nothing (the primary
// waited for its replica), and writes go on to the new primary, which the old one now follows.
func TestRedisURLLeaderMove(t *testing.T) {
	needRedisServer(t)
	ctx := context.Background()
	primary := startRedis(t, nil)
	reg, err := engines.Lookup("redis-url")
	if err != nil {
		t.Fatal(err)
	}
	spec := engines.Spec{RunID: "move", Design: "stream", Producers: 1, Consumers: 1, Address: primary.Addr(), Faults: []string{"leader-move"}}
	if e, err := reg.New(ctx, spec); err == nil {
		e.Close()
		t.Fatal("a primary without a replica was accepted for leader-move")
	} else if want := "has no replica online (connected_slaves:0): FAILOVER needs one"; !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal %q lacks %q", err, want)
	} else {
		t.Log(err)
	}

	replica := startRedis(t, map[string]string{"replicaof": "127.0.0.1 " + strconv.Itoa(primary.Port)})
	for deadline := time.Now().Add(10 * time.Second); ; {
		c := redis.NewClient(&redis.Options{Addr: primary.Addr()})
		info, _ := c.Info(ctx, "replication").Result()
		c.Close()
		if strings.Contains(info, "state=online") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica not online: %s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	yaml := fmt.Sprintf("name: leader-move\nengine: redis-url\naddress: %s\ndesign: stream\nproducers: 2\nconsumers: 2\nrate: 400\nbatch: 4\nduration: 5s\ndrain_timeout: 5s\nfaults:\n  - {at: 2s, kind: leader-move}\n", primary.Addr())
	sc, err := scenarios.Parse("leader-move.yaml", []byte(yaml), bench.Checks())
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	res, err := bench.Run(rctx, rctx, sc, bench.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) != 1 {
		t.Fatalf("%d fault rows, want 1", len(res.Faults))
	}
	f := res.Faults[0]
	t.Logf("fault %s on %s: %s to %s, error %q, recover write %d ns, produce errors %d, lost %d",
		f.Kind, f.Target, time.Duration(f.StartNs), time.Duration(f.EndNs), f.Error, f.RecoverWriteNs, f.ProduceErrors, f.Lost)
	if f.Error != "" {
		t.Fatalf("fault failed: %s", f.Error)
	}
	if want := "leader " + primary.Addr() + ", leader now " + replica.Addr(); f.Target != want {
		t.Errorf("target %q, want %q", f.Target, want)
	}
	if f.EndNs <= f.StartNs || time.Duration(f.EndNs-f.StartNs) > 10*time.Second {
		t.Errorf("window %d..%d ns: want it to end after it began, once the replica is primary", f.StartNs, f.EndNs)
	}
	if f.RecoverWriteNs < 0 {
		t.Errorf("no write acknowledged after the move (recover_write_ns %d)", f.RecoverWriteNs)
	}
	t.Logf("ledger %+v; errors %+v", res.Summary.Ledger, res.Errors)
	if l := res.Summary.Ledger; l.Lost != 0 || f.Lost != 0 {
		t.Errorf("a graceful move lost %d acknowledged messages (row: %d)", l.Lost, f.Lost)
	}
	if got := role(t, replica.Addr()); got != "master" {
		t.Errorf("the replica is %s after the move, want master", got)
	}
	if got := role(t, primary.Addr()); got != "slave" {
		t.Errorf("the old primary is %s after the move, want slave", got)
	}
}
