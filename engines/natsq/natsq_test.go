package natsq

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"qbench/engines"
	"qbench/engines/procs"
)

// needNATS skips without nats-server, and fails under CI=true (.ci/nats-server.sh builds it).
func needNATS(t *testing.T) {
	t.Helper()
	if _, err := procs.NATSServerPath(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
}

// needLossy skips (fails under CI=true) without what lossyfs needs.
func needLossy(t *testing.T) {
	t.Helper()
	_, errFuse := exec.LookPath("fusermount3")
	_, errDev := os.Stat("/dev/fuse")
	if os.Geteuid() != 0 || errFuse != nil || errDev != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root, /dev/fuse and fusermount3 (fuse3)")
		}
		t.Skip("needs root, /dev/fuse and fusermount3 (fuse3)")
	}
}

// start makes a managed engine on nats-server nodes over TCP on loopback, set up, and closed
// with the test.
func start(t *testing.T, ctx context.Context, spec engines.Spec) *managed {
	t.Helper()
	needNATS(t)
	if spec.RunID == "" {
		spec.RunID = t.Name()
	}
	spec.InFlight = max(spec.InFlight, 1)
	eng, err := newManaged(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	m := eng.(*managed)
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	if err := m.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	return m
}

// publish sends n messages through producer 0 (a new one each call), numbered from 0, and
// returns their errors.
func publish(t *testing.T, ctx context.Context, e engines.Engine, n int) error {
	return publishFrom(t, ctx, e, 0, n)
}

// publishFrom sends messages from to from+n-1: a message's number is in the bytes msgID reads.
func publishFrom(t *testing.T, ctx context.Context, e engines.Engine, from, n int) error {
	t.Helper()
	p, err := e.NewProducer(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	payloads := make([][]byte, n)
	for i := range payloads {
		payloads[i] = fmt.Appendf(nil, "msg-%020d-padding", from+i)
	}
	errs := make([]error, n)
	p.Send(ctx, payloads, errs)
	return errors.Join(errs...)
}

// receive reads until c has received want messages.
func receive(t *testing.T, ctx context.Context, c engines.Consumer, want int) []engines.Delivery {
	t.Helper()
	var got []engines.Delivery
	for len(got) < want {
		ds, err := c.Receive(ctx)
		if err != nil && ctx.Err() != nil {
			t.Fatalf("received %d of %d: %v", len(got), want, err)
		}
		for _, d := range ds {
			// Receive reuses its slice: keep the handle, the payload is not needed.
			got = append(got, engines.Delivery{Handle: d.Handle})
		}
	}
	return got
}

// Each client of a shared durable holds what it was delivered until it acknowledges it, and the
// holds add up to the durable's num_ack_pending; core NATS keeps no record.
func TestPendingByConsumer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := start(t, ctx, engines.Spec{Design: DesignWorkQueue, Producers: 1, Consumers: 3,
		Options: Options{Storage: "file", Servers: 1, Replicas: 1, Groups: 1, Fetch: 4}})
	if err := publish(t, ctx, m, 10); err != nil {
		t.Fatal(err)
	}
	var cs []engines.Consumer
	for i := range 2 {
		c, err := m.NewConsumer(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	// Consumer 0 takes 4 and acknowledges 1; consumer 1 takes the next 4 and acknowledges none.
	d0 := receive(t, ctx, cs[0], 4)
	d1 := receive(t, ctx, cs[1], 4)
	if err := cs[0].Ack(ctx, d0[:1]); err != nil {
		t.Fatal(err)
	}
	if err := m.admin.Flush(); err != nil {
		t.Fatal(err)
	}
	// Acknowledgements are asynchronous: wait until the server counts the one sent.
	var lag engines.Lag
	for deadline := time.Now().Add(10 * time.Second); ; {
		var err error
		if lag, err = m.Lag(ctx); err != nil {
			t.Fatal(err)
		}
		if lag.Pending == int64(len(d0)-1+len(d1)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	got, err := m.PendingByConsumer(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{int64(len(d0) - 1), int64(len(d1)), 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pending by consumer %v, want %v", got, want)
	}
	if backlog := int64(10 - len(d0) - len(d1)); lag.Pending != want[0]+want[1] || lag.Backlog != backlog {
		t.Fatalf("engine lag %+v: want num_ack_pending %d (the holds' sum), num_pending %d", lag, want[0]+want[1], backlog)
	}
	core := &engine{spec: engines.Spec{Design: DesignCore}}
	if _, err := core.PendingByConsumer(ctx, 1); !errors.Is(err, engines.ErrNothingStored) {
		t.Fatalf("core: %v, want ErrNothingStored", err)
	}
}

// The sweep reads a group whose consumer is gone from the stream's first message (on limits
// retention the stream keeps what was read too, which the ledger ignores), and a stream that is
// gone holds nothing: both end without an error, so a result is not flagged sweep-failed for
// messages that are truly gone.
func TestSweepAfterTheConsumerOrTheStreamIsGone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := start(t, ctx, engines.Spec{Design: DesignLimits, Producers: 1, Consumers: 1,
		Options: Options{Storage: "file", Servers: 1, Replicas: 1, Groups: 1, Fetch: 4}})
	if err := publish(t, ctx, m, 10); err != nil {
		t.Fatal(err)
	}
	sweep := func() (int, error) {
		n := 0
		err := m.Sweep(ctx, func(int, []byte) { n++ })
		return n, err
	}
	if n, err := sweep(); err != nil || n != 10 {
		t.Fatalf("sweep with the consumer: %d found, %v; want 10", n, err)
	}
	if err := m.js.DeleteConsumer(ctx, m.stream, m.durable(0)); err != nil {
		t.Fatal(err)
	}
	if n, err := sweep(); err != nil || n != 10 {
		t.Fatalf("sweep without the consumer: %d found, %v; want 10, from the stream's first", n, err)
	}
	if err := m.js.DeleteStream(ctx, m.stream); err != nil {
		t.Fatal(err)
	}
	if n, err := sweep(); err != nil || n != 0 {
		t.Fatalf("sweep without the stream: %d found, %v; want 0 and no error", n, err)
	}
}

// Health reads the account, the stream and the node's /healthz.
func TestHealth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := start(t, ctx, engines.Spec{Design: DesignLimits, Producers: 1, Consumers: 1,
		Options: Options{Storage: "file", Servers: 1, Replicas: 1, Groups: 1, Fetch: 100}})
	if err := publish(t, ctx, m, 7); err != nil {
		t.Fatal(err)
	}
	h, err := m.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"jetstream": "ok", "stream": "ok", "healthz.n1": "ok"} {
		if h.Status[k] != v {
			t.Errorf("status %s = %q, want %q (all: %v)", k, h.Status[k], v, h.Status)
		}
	}
	c := h.Counters
	if c["stream_msgs"] != 7 || c["streams"] != 1 || c["consumers"] != 1 || c["store_bytes"] <= 0 || c["api_total"] <= 0 {
		t.Errorf("counters %v: want 7 stream messages, 1 stream, 1 consumer, store and API use", c)
	}
	if _, ok := c["max_store"]; !ok {
		t.Errorf("counters %v: no max_store", c)
	}
	if _, ok := h.Status["stream_leader"]; ok {
		t.Errorf("a single replica reports a leader: %v", h.Status)
	}
}

// A full disk refuses publishes with an error, nothing acknowledged is lost, and publishes are
// acknowledged again once space returns.
func TestDiskFull(t *testing.T) {
	needLossy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := start(t, ctx, engines.Spec{Design: DesignWorkQueue, Producers: 1, Consumers: 1, LossyFS: true,
		Options: Options{Storage: "file", Servers: 1, Replicas: 1, Groups: 1, Fetch: 100}})
	if err := publish(t, ctx, m, 5); err != nil {
		t.Fatal(err)
	}
	if err := m.DiskFull(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := publish(t, ctx, m, 5); err == nil {
		t.Fatal("publishes acknowledged on a full disk")
	}
	if err := m.DiskFull(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := publish(t, ctx, m, 5); err != nil {
		t.Fatalf("after the disk has room again: %v", err)
	}
	h, err := m.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Counters["stream_msgs"] != 10 {
		t.Fatalf("stream holds %d messages, want the 10 acknowledged", h.Counters["stream_msgs"])
	}
	unmounted := &managed{engine: m.engine, cluster: m.cluster}
	if err := unmounted.DiskFull(ctx, true); err == nil {
		t.Fatal("DiskFull without the store on lossyfs did not fail")
	}
}

// In a 3-node cluster the stream's leader is killed, another node leads, health shows the
// dead node and the change, and the node comes back.
func TestKillLeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	began := time.Now()
	m := start(t, ctx, engines.Spec{Design: DesignWorkQueue, Producers: 1, Consumers: 1,
		Options: Options{Storage: "file", Servers: 3, Replicas: 3, Groups: 1, Fetch: 100, MsgID: true}})
	if err := publish(t, ctx, m, 20); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Health(ctx); err != nil { // the first reading, to count a change from
		t.Fatal(err)
	}
	t.Logf("set up at %s", time.Since(began))
	ch, err := m.KillLeader(ctx, true)
	t.Logf("killed at %s: %+v", time.Since(began), ch)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Node < 1 || ch.Node > 3 || ch.NewLeader < 1 || ch.NewLeader > 3 || ch.NewLeader == ch.Node {
		t.Fatalf("leader change %+v: want a new leader among the other nodes", ch)
	}
	h := healthy(t, ctx, m)
	dead := m.cluster.Nodes[ch.Node-1].Name()
	if h.Status["healthz."+dead] != "down" || h.Status["stream_leader"] != m.cluster.Nodes[ch.NewLeader-1].Name() ||
		h.Counters["stream_leader_changes"] != 1 {
		t.Fatalf("health after the kill %v %v: want %s down, the new leader, 1 change", h.Status, h.Counters, dead)
	}
	// Writes resume on the new leader. An attempt may go unanswered while the cluster settles
	// (the reply lost, or the publish routed before the new leader took the subject): each is
	// bounded and retried, and Nats-Msg-Id keeps a retried message from being stored twice.
	var perr error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		perr = publishFrom(t, pctx, m, 20, 20)
		pcancel()
		if perr == nil {
			break
		}
	}
	if perr != nil {
		t.Fatalf("publishes to the new leader: %v", perr)
	}
	t.Logf("written again at %s", time.Since(began))
	if err := m.RestartNode(ctx, ch.Node); err != nil {
		t.Fatal(err)
	}
	if h := healthy(t, ctx, m); h.Counters["stream_msgs"] != 40 {
		t.Fatalf("the stream holds %d messages, want the 40 acknowledged", h.Counters["stream_msgs"])
	}
	single := &managed{engine: m.engine, cluster: &procs.NATSCluster{Nodes: m.cluster.Nodes[:1]}}
	if _, err := single.KillLeader(ctx, true); err == nil {
		t.Fatal("a leader kill on one server did not fail")
	}
}

// healthy is a Health reading whose stream part answered: the admin connection may be moving
// off a killed node.
func healthy(t *testing.T, ctx context.Context, m *managed) engines.Health {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		// Bounded as the sampler bounds it: a JetStream API request can go unanswered while the
		// cluster elects a new meta leader.
		hctx, cancel := context.WithTimeout(ctx, time.Second)
		h, err := m.Health(hctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if h.Status["stream"] == "ok" || time.Now().After(deadline) {
			return h
		}
		time.Sleep(50 * time.Millisecond)
	}
}
