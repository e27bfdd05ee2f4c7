package kafkaq

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"qbench/engines"
)

// waitHealth polls Health until ok accepts a reading, or fails after limit.
func waitHealth(t *testing.T, e engines.HealthReporter, limit time.Duration, what string, ok func(map[string]int64) bool) map[string]int64 {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last map[string]int64
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		h, err := e.Health(ctx)
		cancel()
		if err == nil {
			last = h.Counters
			if ok(last) {
				return last
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last health %v (err %v)", what, limit, last, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// throughFaults makes consumers behave as the runner's do across a broker's death: a failed
// fetch or commit is logged and tried again rather than ending the consumer (a later commit
// covers a failed one).
func throughFaults(t *testing.T, cs []engines.Consumer) []engines.Consumer {
	out := make([]engines.Consumer, len(cs))
	for i, c := range cs {
		out[i] = retrying{c, t}
	}
	return out
}

type retrying struct {
	engines.Consumer
	t *testing.T
}

func (r retrying) Receive(ctx context.Context) ([]engines.Delivery, error) {
	ds, err := r.Consumer.Receive(ctx)
	if err != nil && ctx.Err() == nil {
		r.t.Logf("receive failed, retried: %v", err)
		time.Sleep(100 * time.Millisecond)
		return nil, nil
	}
	return ds, err
}

func (r retrying) Ack(ctx context.Context, ds []engines.Delivery) error {
	if err := r.Consumer.Ack(ctx, ds); err != nil {
		r.t.Logf("commit failed, left to the next: %v", err)
	}
	return nil
}

// checkNoLoss checks that every message firstSeq..firstSeq+n-1 of producer 0 arrived at least
// once: across a leader change a redelivery is allowed (and logged), a loss is not.
func checkNoLoss(t *testing.T, recs []rec, n int, firstSeq uint64) {
	t.Helper()
	seen := map[uint64]int{}
	for _, r := range recs {
		seen[r.seq]++
	}
	lost, dup := 0, 0
	for s := range n {
		switch c := seen[firstSeq+uint64(s)]; {
		case c == 0:
			lost++
		case c > 1:
			dup += c - 1
		}
	}
	t.Logf("seq %d..%d: lost %d, duplicates %d", firstSeq, firstSeq+uint64(n)-1, lost, dup)
	if lost != 0 {
		t.Errorf("%d of %d acknowledged messages lost", lost, n)
	}
}

// A three-node KRaft cluster on loopback through the registered "kafka" engine: every node a
// broker and a controller voter, a topic with three replicas and min.insync.replicas 2 that
// loses nothing, health from metadata, a SIGKILLed partition leader replaced by an in-sync
// follower with acks=all writes still accepted, the node restarted and back in the ISR, a clean
// restart of the next leader, a leader-move on the managed engine and on kafka-url at the same
// brokers, and every node's process gone after Close. About 80 s on a quiet 2-core machine,
// bounded at 150 s; required under CI=true.
func TestThreeBrokerClusterLeaderKill(t *testing.T) {
	needBroker(t, sharedErr)
	t.Setenv("QBENCH_KAFKA_DATA", t.TempDir())
	reg, err := engines.Lookup("kafka")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	began := time.Now()
	eng, err := reg.New(ctx, engines.Spec{RunID: fmt.Sprintf("cluster-%d", os.Getpid()), Design: Design, Producers: 1, Consumers: 1,
		Options: kafkaOptions(t, "brokers: 3\nacks: all\nmin_insync_replicas: 2\npartitions: 1\nunclean_leader_election: false")})
	if err != nil {
		t.Fatal(err)
	}
	m := eng.(*managed)
	pids := m.cluster.PIDs()
	t.Cleanup(func() {
		if t.Failed() {
			for _, k := range m.cluster.Nodes {
				t.Logf("node %d broker.log tail:\n%s", k.ID(), k.LogTail(3000))
			}
		}
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
		for _, pid := range pids {
			if pid != 0 && syscall.Kill(pid, 0) == nil {
				t.Errorf("broker pid %d survived Close", pid)
			}
		}
	})
	t.Logf("3-node cluster formed in %v; pids %v; addrs %v", time.Since(began).Round(time.Millisecond), pids, m.cluster.Addrs())
	if len(pids) != 3 || pids[0] == pids[1] || pids[1] == pids[2] || pids[0] == 0 {
		t.Fatalf("pids %v, want three distinct live brokers", pids)
	}
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	// A new topic's configs reach every broker of a fresh cluster a moment after CreateTopics
	// returns; under load the first describe can fail (configs.error): ask again for a while.
	wantFacts := map[string]string{"brokers": "3", "replication.factor": "3", "topic.min.insync.replicas": "2",
		"topic.unclean.leader.election.enable": "false"}
	f := m.Facts(ctx)
	for deadline := time.Now().Add(15 * time.Second); f.Settings["configs.error"] != "" && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		f = m.Facts(ctx)
	}
	for k, want := range wantFacts {
		if f.Settings[k] != want {
			t.Errorf("facts %s = %q, want %q (configs.error %q)", k, f.Settings[k], want, f.Settings["configs.error"])
		}
	}
	h := waitHealth(t, m, 10*time.Second, "full ISR", func(c map[string]int64) bool { return c["isr_size.p0"] == 3 })
	for _, k := range []string{"brokers", "partitions", "under_replicated_partitions", "under_min_isr_partitions", "offline_partitions", "isr_min", "isr_shrinks", "leader.p0"} {
		if _, ok := h[k]; !ok {
			t.Errorf("health lacks %s: %v", k, h)
		}
	}
	if h["brokers"] != 3 || h["under_replicated_partitions"] != 0 || h["offline_partitions"] != 0 {
		t.Errorf("healthy cluster reads %v", h)
	}

	cs := openConsumers(t, eng, 1)
	defer closeAll(t, cs)
	const n = 1000
	produce(t, eng, 1, n, 50, 0)
	checkExactlyOnce(t, consume(t, cs, n, true, 0), 1, n, 0)

	began = time.Now()
	ch, err := m.KillLeader(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed leader %d; leader now %d after %v", ch.Node, ch.NewLeader, time.Since(began).Round(time.Millisecond))
	if ch.NewLeader == 0 || ch.NewLeader == ch.Node {
		t.Fatalf("leader change %+v", ch)
	}
	if pid := pids[ch.Node-1]; syscall.Kill(pid, 0) == nil {
		t.Fatalf("killed leader's pid %d still alive", pid)
	}
	h = waitHealth(t, m, 15*time.Second, "ISR shrunk to 2", func(c map[string]int64) bool { return c["isr_size.p0"] == 2 })
	if h["under_replicated_partitions"] != 1 || h["leader.p0"] != int64(ch.NewLeader) || h["brokers"] != 2 {
		t.Errorf("after the kill health reads %v", h)
	}
	// Two replicas in sync meet min.insync.replicas 2: acks=all writes go on, and the consumer
	// gets every one of them (redelivery across the change allowed, loss not).
	through := throughFaults(t, cs)
	produce(t, eng, 1, n, 50, n)
	checkNoLoss(t, consume(t, through, n, true, 300*time.Millisecond), n, n)

	if err := m.RestartNode(ctx, ch.Node); err != nil {
		t.Fatal(err)
	}
	pids[ch.Node-1] = m.cluster.Node(ch.Node).PID()
	h = waitHealth(t, m, 30*time.Second, "restarted node back in the ISR", func(c map[string]int64) bool { return c["isr_size.p0"] == 3 })
	if h["isr_shrinks"] < 1 || h["isr_expands"] < 1 || h["leader_changes"] < 1 {
		t.Errorf("health did not count the shrink, expansion and leader change: %v", h)
	}

	// node-restart: a clean shutdown of the leader hands leadership over before the process
	// exits (controlled shutdown), so the new leader is there at once; the node comes back.
	began = time.Now()
	ch, err = m.KillLeader(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean stop of leader %d; leader now %d after %v", ch.Node, ch.NewLeader, time.Since(began).Round(time.Millisecond))
	if ch.NewLeader == 0 || ch.NewLeader == ch.Node || m.cluster.Node(ch.Node).PID() != 0 {
		t.Fatalf("leader change %+v, stopped node's pid %d", ch, m.cluster.Node(ch.Node).PID())
	}
	produce(t, eng, 1, n, 50, 2*n)
	checkNoLoss(t, consume(t, through, n, true, 300*time.Millisecond), n, 2*n)
	if err := m.RestartNode(ctx, ch.Node); err != nil {
		t.Fatal(err)
	}
	pids[ch.Node-1] = m.cluster.Node(ch.Node).PID()

	// leader-move, on the managed engine and on kafka-url at the same brokers: the leadership
	// goes to another in-sync replica with nothing stopped, and writes go on to it.
	waitHealth(t, m, 30*time.Second, "restarted node back in the ISR", func(c map[string]int64) bool { return c["isr_size.p0"] == 3 })
	leaderOf := func(e *engine) func() int {
		return func() int {
			_, _, l, err := e.partitionReplicas(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
	}
	moveLeaderOn(t, ctx, m, leaderOf(m.engine))
	produce(t, eng, 1, n, 50, 3*n)
	checkNoLoss(t, consume(t, through, n, true, 300*time.Millisecond), n, 3*n)
	urlReg, err := engines.Lookup("kafka-url")
	if err != nil {
		t.Fatal(err)
	}
	urlEng, err := urlReg.New(ctx, engines.Spec{RunID: fmt.Sprintf("cluster-url-%d", os.Getpid()), Design: Design, Producers: 1, Consumers: 1,
		Address: strings.Join(m.cluster.Addrs(), ","), Faults: []string{"leader-move"}})
	if err != nil {
		t.Fatal(err)
	}
	defer urlEng.Close()
	if err := urlEng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	moveLeaderOn(t, ctx, urlEng.(*engine), leaderOf(urlEng.(*engine)))
	if err := urlEng.Teardown(ctx); err != nil {
		t.Error(err)
	}
	if err := eng.Teardown(ctx); err != nil {
		t.Error(err)
	}
}
