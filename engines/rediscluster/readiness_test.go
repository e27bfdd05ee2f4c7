package rediscluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"qbench/engines"
	"qbench/engines/redisq"
)

// INFO replication as a primary reports it, read into readiness: a replica still in a sync with
// its primary (wait_bgsave), one whose last ACK is old, or too few connected replicas keep the
// primary not ready; a min_slaves_good_slaves below the count keeps it not ready even when the
// lines look online.
func TestReplicationReadiness(t *testing.T) {
	const head = "# Replication\r\nrole:master\r\n"
	const tail = "master_failover_state:no-failover\r\nmaster_repl_offset:0\r\n"
	online := "slave0:ip=127.0.0.1,port=7001,state=online,offset=0,lag=0\r\n"
	online2 := "slave1:ip=127.0.0.1,port=7002,state=online,offset=14,lag=1\r\n"
	for _, tc := range []struct {
		name, info string
		want       int
		ready      bool
		why        string // part of the reason when not ready
	}{
		{"two online", head + "connected_slaves:2\r\nmin_slaves_good_slaves:2\r\n" + online + online2 + tail, 2, true, ""},
		{"one of two wanted", head + "connected_slaves:1\r\n" + online + tail, 2, false, "connected_slaves:1, want 2"},
		{"resyncing", head + "connected_slaves:2\r\nmin_slaves_good_slaves:0\r\n" +
			"slave0:ip=127.0.0.1,port=7001,state=wait_bgsave,offset=0,lag=0\r\n" + online2 + tail, 2, false, "127.0.0.1:7001 state=wait_bgsave"},
		{"resyncing, one is enough", head + "connected_slaves:2\r\n" +
			"slave0:ip=127.0.0.1,port=7001,state=wait_bgsave,offset=0,lag=0\r\n" + online2 + tail, 1, true, ""},
		{"stale ack", head + "connected_slaves:1\r\nslave0:ip=127.0.0.1,port=7001,state=online,offset=0,lag=4\r\n" + tail, 1, false, "lag=4"},
		{"not yet counted good", head + "connected_slaves:1\r\nmin_slaves_good_slaves:0\r\n" + online + tail, 1, false, "min_slaves_good_slaves:0"},
		{"no replicas wanted", head + "connected_slaves:0\r\n" + tail, 0, true, ""},
		{"no replicas", head + "connected_slaves:0\r\n" + tail, 1, false, "connected_slaves:0"},
	} {
		r, err := parseReplication(tc.info)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.role != "master" {
			t.Errorf("%s: role %q", tc.name, r.role)
		}
		err = r.ready(tc.want)
		switch {
		case tc.ready && err != nil:
			t.Errorf("%s: not ready: %v", tc.name, err)
		case !tc.ready && err == nil:
			t.Errorf("%s: ready, want not ready (%s)", tc.name, tc.why)
		case !tc.ready && !strings.Contains(err.Error(), tc.why):
			t.Errorf("%s: %q does not say %q", tc.name, err, tc.why)
		}
	}
	r, err := parseReplication(head + "connected_slaves:2\r\n" + online + online2)
	if err != nil || len(r.replicas) != 2 || r.replicas[1] != (replicaLine{"127.0.0.1:7002", "online", 1}) || r.good != -1 {
		t.Errorf("parsed %+v, %v", r, err)
	}
	for _, bad := range []string{"connected_slaves:2\r\n", head + "connected_slaves:x\r\n", head + "slave0:ip=a,port=1,state=online,lag=z\r\n"} {
		if _, err := parseReplication(bad); err == nil {
			t.Errorf("%q parsed without error", bad)
		}
	}
}

// A managed cluster started with min-replicas-to-write 1 (its bus direct, as in a run without a
// partition fault) takes the set-up's writes at once (checkFirstWrites).
func TestFirstWritesWithMinReplicas(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	c, err := StartCluster(ctx, DefaultPrimaries, 1, map[string]string{"min-replicas-to-write": "1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	t.Logf("6-node cluster with its replicas ready in %s", time.Since(start).Round(time.Millisecond))
	e, err := newEngine(ctx, engines.Spec{RunID: "t-ready", Design: "stream", Producers: 1, Consumers: 3,
		Options: redisq.Options{Stream: redisq.StreamOptions{GroupStart: "0"}}}, "redis-cluster-url", c.Addrs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	checkFirstWrites(ctx, t, c, e)
}

// checkFirstWrites: on a cluster just started with min-replicas-to-write 1, the set-up (the
// stream's XGROUP CREATE MKSTREAM, a write) of every shard of stream engine e succeeds at once;
// with more good replicas required than the primaries have, the set-up is refused and says what
// the primary reports (retries cut to none here).
func checkFirstWrites(ctx context.Context, t *testing.T, c *Cluster, e *engine) {
	t.Helper()
	defer func(d time.Duration) { noReplicasRetry = d }(noReplicasRetry)
	noReplicasRetry = 0
	if err := e.Setup(ctx); err != nil {
		t.Fatalf("first writes refused on a cluster started with min-replicas-to-write 1: %v", err)
	}
	setAll := func(v string) {
		for _, n := range c.Nodes {
			if _, err := nodeDo(ctx, n.Addr(), "CONFIG", "SET", "min-replicas-to-write", v); err != nil {
				t.Fatal(err)
			}
		}
	}
	setAll("3")
	defer setAll("0")
	// The same set-up again: the refusal comes before the command runs (a group that exists
	// would otherwise be kept).
	err := e.Setup(ctx)
	if err == nil || !strings.Contains(err.Error(), "NOREPLICAS") || !strings.Contains(err.Error(), "min-replicas-to-write 3") || !strings.Contains(err.Error(), "counts 1 good of 1 connected") {
		t.Errorf("set-up with min-replicas-to-write 3 and one replica: %v", err)
	} else {
		t.Logf("refused as expected: %v", err)
	}
}
