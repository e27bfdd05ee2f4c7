package nullq_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"qbench/engines"
	"qbench/engines/nullq"
)

func newEngine(t *testing.T, spec engines.Spec) *nullq.Engine {
	t.Helper()
	e, err := nullq.New(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e.(*nullq.Engine)
}

// The design decides only the receiving groups: pubsub one per consumer, stream one per
// nullq.groups, every other design one group of competing consumers.
func TestGroupsFollowTheDesign(t *testing.T) {
	cases := []struct {
		spec   engines.Spec
		groups int
		of3    int // the group of consumer 3
	}{
		{engines.Spec{Design: "stream", Consumers: 4}, 1, 0},
		{engines.Spec{Design: "stream", Consumers: 4, Options: nullq.Options{Capacity: 8, Groups: 2}}, 2, 1},
		{engines.Spec{Design: "pubsub", Consumers: 4}, 4, 3},
		{engines.Spec{Design: "list", Consumers: 4}, 1, 0},
		{engines.Spec{Design: "reliable-list", Consumers: 4}, 1, 0},
		{engines.Spec{Design: "topic", Consumers: 4}, 1, 0},
	}
	for _, c := range cases {
		e := newEngine(t, c.spec)
		if e.Groups() != c.groups || e.GroupOf(3) != c.of3 {
			t.Errorf("%+v: %d groups, consumer 3 in %d; want %d and %d", c.spec, e.Groups(), e.GroupOf(3), c.groups, c.of3)
		}
	}
}

// Every group receives every message, a copy of what was sent (the runner reuses its buffers).
func TestSendReceiveEveryGroup(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, engines.Spec{Design: "pubsub", Consumers: 2})
	p, _ := e.NewProducer(ctx, 0)
	buf := []byte("hello")
	errs := make([]error, 2)
	p.Send(ctx, [][]byte{buf, []byte("world")}, errs)
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	copy(buf, "XXXXX")
	if lag, _ := e.Lag(ctx); lag.Backlog != 4 {
		t.Fatalf("backlog %d, want 2 messages x 2 groups", lag.Backlog)
	}
	for id := 0; id < 2; id++ {
		c, _ := e.NewConsumer(ctx, id)
		ds, err := c.Receive(ctx)
		if err != nil || len(ds) != 2 || !bytes.Equal(ds[0].Payload, []byte("hello")) || !bytes.Equal(ds[1].Payload, []byte("world")) {
			t.Fatalf("consumer %d: %v %+v", id, err, ds)
		}
		if err := c.Ack(ctx, ds); err != nil {
			t.Fatal(err)
		}
	}
	if lag, _ := e.Lag(ctx); lag.Backlog != 0 {
		t.Fatalf("backlog %d after both groups received", lag.Backlog)
	}
}

// A full channel blocks Send (backpressure, no drop) until a consumer takes a message or the
// context ends; an empty one makes Receive wait about 100 ms and return nothing.
func TestBackpressureAndIdleReceive(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, engines.Spec{Design: "list"})
	p, _ := e.NewProducer(ctx, 0)
	c, _ := e.NewConsumer(ctx, 0)

	start := time.Now()
	ds, err := c.Receive(ctx)
	if err != nil || len(ds) != 0 || time.Since(start) < 90*time.Millisecond {
		t.Fatalf("idle receive: %v, %d messages after %v", err, len(ds), time.Since(start))
	}

	one := [][]byte{make([]byte, 32)}
	errs := make([]error, 1)
	for i := 0; i < nullq.Capacity; i++ {
		p.Send(ctx, one, errs)
		if errs[0] != nil {
			t.Fatalf("send %d: %v", i, errs[0])
		}
	}
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	start = time.Now()
	p.Send(tctx, one, errs)
	cancel()
	if !errors.Is(errs[0], context.DeadlineExceeded) || time.Since(start) < 45*time.Millisecond {
		t.Fatalf("send into a full channel: %v after %v; want to block until the deadline", errs[0], time.Since(start))
	}
	if lag, _ := e.Lag(ctx); lag.Backlog != nullq.Capacity {
		t.Fatalf("backlog %d, want %d (the failed send must not be queued)", lag.Backlog, nullq.Capacity)
	}

	done := make(chan error, 1)
	go func() {
		errs := make([]error, 1)
		p.Send(ctx, one, errs)
		done <- errs[0]
	}()
	select {
	case err := <-done:
		t.Fatalf("send into a full channel returned %v before anything was received", err)
	case <-time.After(20 * time.Millisecond):
	}
	if ds, err := c.Receive(ctx); err != nil || len(ds) != 100 {
		t.Fatalf("receive: %v, %d messages (want the 100 a receive takes at most)", err, len(ds))
	}
	if err := <-done; err != nil {
		t.Fatalf("blocked send after room was made: %v", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Receive(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("receive after cancel: %v", err)
	}
}

func TestRegisteredAndInProcess(t *testing.T) {
	reg, err := engines.Lookup("nullq")
	if err != nil || reg.Designs[0] != "stream" || !reg.Supports("pubsub") || reg.Supports("carrier-pigeon") {
		t.Fatalf("%+v %v", reg, err)
	}
	var e engines.Engine = newEngine(t, engines.Spec{Design: "stream"})
	if ip, ok := e.(engines.InProcess); !ok || !ip.InProcess() {
		t.Fatal("the null engine must say it runs in process")
	}
	if _, ok := e.(engines.LagReporter); !ok {
		t.Fatal("no lag")
	}
}

// What no consumer took is handed to the final sweep, per group: a backlog, not a loss.
func TestSweepReportsWhatIsLeft(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, engines.Spec{Design: "pubsub", Consumers: 2, Producers: 1})
	p, err := e.NewProducer(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 3)
	p.Send(ctx, [][]byte{[]byte("a"), []byte("b"), []byte("c")}, errs)
	c, err := e.NewConsumer(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := c.Receive(ctx)
	if err != nil || len(ds) != 3 {
		t.Fatalf("group 1 received %d, %v", len(ds), err)
	}
	found := map[int]int{}
	if err := e.Sweep(ctx, func(g int, _ []byte) { found[g]++ }); err != nil {
		t.Fatal(err)
	}
	if found[0] != 3 || found[1] != 0 {
		t.Fatalf("sweep found %v, want 3 left for group 0 and none for group 1", found)
	}
}

// The engine's own section (nullq: {capacity: N}) is decoded by its registration and reaches
// New in Spec.Options: a channel of capacity 2 takes two messages and holds the third back.
func TestOptionsSectionSetsCapacity(t *testing.T) {
	reg, err := engines.Lookup("nullq")
	if err != nil || reg.Options != "nullq" {
		t.Fatalf("registration %+v, %v", reg, err)
	}
	setCapacity := func(n int) func(any) error {
		return func(into any) error { into.(*nullq.Options).Capacity = n; return nil }
	}
	if _, err := reg.Decode(setCapacity(0)); err == nil {
		t.Fatal("capacity 0 accepted")
	} else if f, ok := err.(interface{ Field() string }); !ok || f.Field() != "capacity" {
		t.Fatalf("error %v names no field capacity", err)
	}
	opts, err := reg.Decode(setCapacity(2))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, engines.Spec{Design: "list", Options: opts})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	p, _ := e.NewProducer(ctx, 0)
	errs := make([]error, 3)
	p.Send(ctx, [][]byte{[]byte("a"), []byte("b"), []byte("c")}, errs)
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], context.DeadlineExceeded) {
		t.Fatalf("errs %v, want the third held back by a full channel", errs)
	}
}
