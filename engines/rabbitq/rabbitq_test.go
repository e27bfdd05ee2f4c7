package rabbitq

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"qbench/engines"
	"qbench/engines/enginetest"
	"qbench/engines/procs"
	"qbench/results"
)

// decodeSection decodes a rabbitmq: section as scenario validation does (unknown keys refused).
func decodeSection(section string, managed bool) (Options, error) {
	v, err := decodeFor(managed)(enginetest.Section(section))
	if err != nil {
		return Options{}, err
	}
	return v.(Options), nil
}

// fieldsOf lists the keys a joined options error names, in order.
func fieldsOf(err error) []string {
	var fields []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			var fe interface{ Field() string }
			if errors.As(e, &fe) {
				fields = append(fields, fe.Field())
			}
		}
	}
	return fields
}

// The stream's retention: each bad value names its key (scenario validation turns the key into
// the file's line), and a good section reaches the queue's arguments in RabbitMQ's own format.
func TestRetentionOptions(t *testing.T) {
	for _, tc := range []struct {
		name, section string
		fields        string // the keys the error names; "" for none
		args          amqp.Table
	}{
		{"none", "", "", amqp.Table{}},
		{"all", "max_length_bytes: 1000000\nmax_age: 2h\nmax_segment_size_bytes: 100000", "",
			amqp.Table{"x-max-length-bytes": int64(1000000), "x-max-age": "2h", "x-stream-max-segment-size-bytes": int64(100000)}},
		{"age in seconds", "max_age: 90s", "", amqp.Table{"x-max-age": "90s"}},
		{"age in minutes", "max_age: 120s", "", amqp.Table{"x-max-age": "2m"}},
		{"age in days", "max_age: 48h", "", amqp.Table{"x-max-age": "2D"}},
		{"bad values", "max_length_bytes: -1\nmax_age: 1500ms\nmax_segment_size_bytes: 4000000000", "max_length_bytes,max_age,max_segment_size_bytes", nil},
		{"negative age", "max_age: -1s", "max_age", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := decodeSection(tc.section, true)
			if got := strings.Join(fieldsOf(err), ","); got != tc.fields || (tc.fields == "") != (err == nil) {
				t.Fatalf("error %v names %q, want %q", err, got, tc.fields)
			}
			if err != nil {
				return
			}
			e := &engine{spec: engines.Spec{Design: DesignStream}, opts: o}
			args := e.queueArgs()
			delete(args, "x-queue-type")
			delete(args, "x-initial-cluster-size")
			if len(args) != len(tc.args) {
				t.Fatalf("arguments %v, want %v", args, tc.args)
			}
			for k, v := range tc.args {
				if args[k] != v {
					t.Errorf("%s = %#v, want %#v", k, args[k], v)
				}
			}
		})
	}
	// A queue design has no retention: the engine refuses it, naming the key.
	o, err := decodeSection("max_age: 10s", true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = optionsOf(engines.Spec{Design: DesignQuorum, Options: o}, true)
	if err == nil || !strings.Contains(err.Error(), "max_age: is the stream design's retention") {
		t.Fatalf("quorum design with max_age: %v", err)
	}
	if _, err := optionsOf(engines.Spec{Design: DesignStream, Options: o}, true); err != nil {
		t.Fatalf("stream design with max_age: %v", err)
	}
}

// needRabbit skips without rabbitmq-server, and fails under CI=true (.ci/test installs it).
func needRabbit(t *testing.T) {
	t.Helper()
	if _, err := procs.RabbitServerPath(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
}

// One node serves every case (a start takes seconds); each case declares its own queues.
func TestBroker(t *testing.T) {
	needRabbit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	c, err := procs.StartRabbitCluster(ctx, procs.RabbitConfig{Dir: dir}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(10 * time.Second)
	t.Logf("node started in %s", c.Nodes[0].StartedIn())
	open := func(t *testing.T, spec engines.Spec, opts Options) *engine {
		t.Helper()
		spec.RunID = strings.ReplaceAll(t.Name(), "/", "-")
		e, err := newEngine("rabbitmq", spec, opts.fill(), c.URLs())
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := errors.Join(e.Teardown(ctx), e.Close()); err != nil {
				t.Error(err)
			}
		})
		return e
	}
	send := func(t *testing.T, p engines.Producer, payloads [][]byte) {
		t.Helper()
		errs := make([]error, len(payloads))
		p.Send(ctx, payloads, errs)
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	// counts polls the queue's ready and unacknowledged messages as the broker counts them until
	// they are what the case expects.
	counts := func(t *testing.T, e *engine, ready, unacked int) {
		t.Helper()
		var out string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			out, err = c.Nodes[0].Ctl(ctx, "list_queues", "name", "messages_ready", "messages_unacknowledged", "--no-table-headers", "--quiet")
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) == 3 && f[0] == e.queueOf(0) && f[1] == strconv.Itoa(ready) && f[2] == strconv.Itoa(unacked) {
					return
				}
			}
		}
		t.Fatalf("queue %s never had %d ready and %d unacknowledged:\n%s", e.queueOf(0), ready, unacked, out)
	}

	// The disk alarm blocks publishers: the broker says so (connection.blocked, low on disk) and
	// confirms nothing until the limit is back, then publishes flow again.
	t.Run("disk alarm", func(t *testing.T) {
		e := open(t, engines.Spec{Design: DesignClassic, Producers: 1, Consumers: 1}, DefaultOptions())
		m := &managed{engine: e, cluster: c, dir: dir}
		p, err := e.NewProducer(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		send(t, p, [][]byte{[]byte("before")})
		blocked := p.(*producer).s.conn.NotifyBlocked(make(chan amqp.Blocking, 4))
		began := time.Now()
		if err := m.DiskFull(ctx, true); err != nil {
			t.Fatal(err)
		}
		took := time.Since(began)
		defer m.DiskFull(ctx, false)
		// The broker blocks a connection when it next publishes, and says so.
		sctx, scancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		errs := make([]error, 1)
		p.Send(sctx, [][]byte{[]byte("during")}, errs)
		scancel()
		if !errors.Is(errs[0], context.DeadlineExceeded) {
			t.Fatalf("a publish during the alarm returned %v, want no confirm (deadline exceeded)", errs[0])
		}
		select {
		case b := <-blocked:
			if !b.Active || !strings.Contains(b.Reason, "disk") {
				t.Fatalf("notification %+v, want blocked for disk", b)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no connection.blocked for a publish during the disk alarm")
		}
		t.Logf("blocked; DiskFull(true) took %s", took.Round(time.Millisecond))
		began = time.Now()
		if err := m.DiskFull(ctx, false); err != nil {
			t.Fatal(err)
		}
		select {
		case b := <-blocked:
			if b.Active {
				t.Fatalf("notification %+v, want unblocked", b)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no connection.unblocked within 10 s of the limit's return")
		}
		t.Logf("unblocked %s after DiskFull(false) was called", time.Since(began).Round(time.Millisecond))
		send(t, p, [][]byte{[]byte("after")})
		counts(t, e, 3, 0) // the blocked publish was not lost: the broker read it once unblocked
	})

	// RabbitMQ confirms a message it routed to no queue (as it does to a stream after a restart,
	// until the stream coordinator has restarted it): Send fails it, and counts only the rest.
	t.Run("unroutable publish fails", func(t *testing.T) {
		e := open(t, engines.Spec{Design: DesignStream, Producers: 1, Consumers: 1}, DefaultOptions())
		p, err := e.NewProducer(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		bind := func(bound bool) {
			ch, err := e.adminChannel()
			if err != nil {
				t.Fatal(err)
			}
			defer ch.Close()
			if bound {
				err = ch.QueueBind(e.queueOf(0), "", e.exchange, false, nil)
			} else {
				err = ch.QueueUnbind(e.queueOf(0), "", e.exchange, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		bind(false)
		errs := make([]error, 3)
		p.Send(ctx, [][]byte{[]byte("r0"), []byte("r1"), []byte("r2")}, errs)
		for i, err := range errs {
			if !errors.Is(err, errReturned) {
				t.Errorf("publish %d to no queue: %v, want %v", i, err, errReturned)
			}
		}
		bind(true)
		send(t, p, [][]byte{[]byte("a0"), []byte("a1")})
		if n := e.published.Load(); n != 2 {
			t.Errorf("published %d, want 2 (the routed ones)", n)
		}
	})

	// Each consumer's pending count is its channel's unacknowledged deliveries as the broker
	// counts them, those prefetched but never received included, and they go back to the queue.
	t.Run("pending by consumer", func(t *testing.T) {
		opts := DefaultOptions()
		opts.Prefetch = 5
		e := open(t, engines.Spec{Design: DesignClassic, Producers: 1, Consumers: 2}, opts)
		p, err := e.NewProducer(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var msgs [][]byte
		for i := range 8 {
			msgs = append(msgs, []byte("m"+strconv.Itoa(i)))
		}
		send(t, p, msgs)
		c0, err := e.NewConsumer(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		counts(t, e, 3, 5)
		ds, err := c0.Receive(ctx)
		if err != nil || len(ds) == 0 {
			t.Fatalf("receive: %d deliveries, %v", len(ds), err)
		}
		// One acknowledged: the broker sends one more, which c0 never receives.
		if err := c0.Ack(ctx, ds[:1]); err != nil {
			t.Fatal(err)
		}
		counts(t, e, 2, 5)
		c1, err := e.NewConsumer(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		for got := 0; got < 2; {
			ds, err := c1.Receive(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := c1.Ack(ctx, ds); err != nil {
				t.Fatal(err)
			}
			got += len(ds)
		}
		counts(t, e, 0, 5)
		if err := errors.Join(c1.Close(), c0.Close()); err != nil {
			t.Fatal(err)
		}
		got, err := e.PendingByConsumer(ctx, 2)
		if err != nil || len(got) != 2 || got[0] != 5 || got[1] != 0 {
			t.Fatalf("pending by consumer %v, %v; want [5 0]", got, err)
		}
		counts(t, e, 5, 0) // what c0 held went back to the queue
	})

	// A produce-only run into a named queue that does not exist yet creates it, publishes
	// through the default exchange and leaves the queue (with its messages) at tear-down; a
	// consume-only run then reads them from it, and leaves it too.
	t.Run("named queue", func(t *testing.T) {
		const name = "orders"
		spec := engines.Spec{RunID: "named", Design: DesignQuorum, Producers: 1, Consumers: 1, Names: map[string]string{NameQueue: name}}
		run := func(do func(e *engine)) {
			e, err := newEngine("rabbitmq-url", spec, DefaultOptions().fill(), c.URLs())
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			do(e)
			if err := errors.Join(e.Teardown(ctx), e.Close()); err != nil {
				t.Fatal(err)
			}
		}
		run(func(e *engine) {
			if e.queueOf(0) != name || e.exchange != "" {
				t.Fatalf("queue %q, exchange %q; want the named queue through the default exchange", e.queueOf(0), e.exchange)
			}
			p, err := e.NewProducer(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			send(t, p, [][]byte{[]byte("a"), []byte("b")})
			counts(t, e, 2, 0)
		})
		var got []string
		run(func(e *engine) {
			cons, err := e.NewConsumer(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); len(got) < 2 && time.Now().Before(deadline); {
				ds, err := cons.Receive(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range ds {
					got = append(got, string(d.Payload))
				}
				if err := cons.Ack(ctx, ds); err != nil {
					t.Fatal(err)
				}
			}
			if err := cons.Close(); err != nil {
				t.Fatal(err)
			}
		})
		if strings.Join(got, ",") != "a,b" {
			t.Fatalf("the consume-only run read %q, want a,b", got)
		}
		// Both tear-downs left the queue; the producer's run declared no exchange of its own.
		out, err := c.Nodes[0].Ctl(ctx, "list_queues", "name", "type", "--no-table-headers", "--quiet")
		if err != nil || !strings.Contains(out, name+"\tquorum") {
			t.Fatalf("queues after both runs:\n%s (%v); want %s, a quorum queue", out, err, name)
		}
		out, err = c.Nodes[0].Ctl(ctx, "list_exchanges", "name", "--no-table-headers", "--quiet")
		if err != nil || strings.Contains(out, "qbench.named") {
			t.Fatalf("exchanges after both runs:\n%s (%v); want none of the run's", out, err)
		}
	})

	// A small retention deletes the stream's oldest segments: the sweep no longer finds them,
	// the offset of the first message it finds counts them, and every message published is
	// either found or counted there.
	t.Run("stream retention", func(t *testing.T) {
		opts := DefaultOptions()
		opts.MaxLengthBytes = 50_000
		opts.MaxSegmentSizeBytes = 10_000
		e := open(t, engines.Spec{Design: DesignStream, Producers: 1, Consumers: 1}, opts)
		p, err := e.NewProducer(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		const published = 1000
		for i := 0; i < published; i += 100 {
			var batch [][]byte
			for j := range 100 {
				batch = append(batch, []byte(strconv.Itoa(i+j)+":"+strings.Repeat("x", 500)))
			}
			send(t, p, batch)
		}
		// Retention runs in the background once a segment fills, and a sweep it overtakes skips
		// what it deleted meanwhile: sweep until two sweeps in a row find the same unbroken run.
		// RabbitMQ 3.10's stream reader can also stall for good when retention deletes the
		// segment it starts in; the sweep then fails, saying so, and the case sweeps again.
		var found, lo, hi, stalled int
		var last [3]int
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
			found, lo, hi = 0, published, -1
			if err := e.Sweep(ctx, func(_ int, b []byte) {
				found++
				id, _ := strconv.Atoi(strings.SplitN(string(b), ":", 2)[0])
				lo, hi = min(lo, id), max(hi, id)
			}); err != nil {
				if stalled++; stalled > 2 || !strings.Contains(err.Error(), "no end marker came") {
					t.Fatal(err)
				}
				t.Log(err)
				continue
			}
			if found < published && hi-lo+1 == found && last == [3]int{found, lo, hi} {
				break
			}
			last = [3]int{found, lo, hi}
		}
		deleted := e.Facts(ctx).Stats[RetentionDeletedStat]
		t.Logf("published %d of 504 bytes; the sweep found %d (%d to %d); %s %d", published, found, lo, hi, RetentionDeletedStat, deleted)
		// The oldest went, a whole segment at a time; the newest stayed, in one piece.
		if found == 0 || found >= published || lo != published-found || hi != published-1 {
			t.Fatalf("the sweep found %d messages, %d to %d, of %d published", found, lo, hi, published)
		}
		if deleted != int64(published-found) {
			t.Errorf("%s = %d, want %d", RetentionDeletedStat, deleted, published-found)
		}
		if _, err := e.PendingByConsumer(ctx, 1); !errors.Is(err, engines.ErrNothingStored) {
			t.Errorf("a stream's pending by consumer: %v, want ErrNothingStored", err)
		}
	})

	// A stream's sweep whose reader goes silent before the end marker attaches a new reader just past
	// the last offset read: what was published since is read, and nothing is read twice. The marker
	// here is one never published, so the sweep reattaches until it gives up, and says so.
	t.Run("sweep reattaches", func(t *testing.T) {
		e := open(t, engines.Spec{Design: DesignStream, Producers: 1, Consumers: 1}, DefaultOptions())
		p, err := e.NewProducer(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		publish := func(from, to int) {
			var batch [][]byte
			for i := from; i < to; i++ {
				batch = append(batch, []byte(strconv.Itoa(i)))
			}
			errs := make([]error, len(batch))
			p.Send(ctx, batch, errs)
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
		}
		publish(0, 300)
		ch, err := e.adminChannel()
		if err != nil {
			t.Fatal(err)
		}
		defer ch.Close()
		if err := ch.Qos(1000, 0, false); err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		s := streamSweep{e: e, ch: ch, end: []byte(sweepEndPrefix + "never-published"), next: -1,
			found:      func(_ int, b []byte) { seen[string(b)]++ },
			markerWait: 4 * time.Second, reattachAfter: time.Second}
		done := make(chan error, 1)
		go func() { done <- s.read(ctx) }()
		time.Sleep(1700 * time.Millisecond) // past the first reattachment
		publish(300, 350)
		err = <-done
		if err == nil || !strings.Contains(err.Error(), "no end marker came") {
			t.Fatalf("sweep: %v, want no end marker", err)
		}
		if s.reattached < 2 {
			t.Errorf("%d readers attached again, want at least 2: %v", s.reattached, err)
		}
		for i := range 350 {
			if n := seen[strconv.Itoa(i)]; n != 1 {
				t.Errorf("message %d read %d times, want once", i, n)
			}
		}
		if len(seen) != 350 || s.n != 350 {
			t.Errorf("read %d distinct, counted %d; want 350 (%v)", len(seen), s.n, err)
		}
		t.Log(err)
	})
}

// A named queue is checked by RabbitMQ's rules, each error naming names.queue; with it the
// section's groups must be 1 (one queue).
func TestNamedQueueChecks(t *testing.T) {
	cases := []struct {
		name, queue string
		groups      int
		want        string // "" for valid; else the field and the start of the message
	}{
		{"plain", "orders", 1, ""},
		{"unicode", "commandes-été", 1, ""},
		{"255 bytes", strings.Repeat("q", 255), 1, ""},
		{"256 bytes", strings.Repeat("q", 256), 1, "queue: must be at most 255 bytes of UTF-8 (got 256 bytes)"},
		{"not UTF-8", "q\xff", 1, "queue: must be UTF-8"},
		{"reserved", "amq.orders", 1, "queue: must not start with amq."},
		{"two groups", "orders", 2, "groups: must be 1 with names.queue (one named queue; got 2)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := engines.Plan{Design: DesignClassic, Names: map[string]string{NameQueue: c.queue}, Consumes: true}
			o := DefaultOptions()
			o.Groups = c.groups
			err := errors.Join(checkNames(p), checkPlan(o, p))
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			// The engine refuses the same names when a spec is built without a scenario.
			if _, err := newEngine("rabbitmq-url", engines.Spec{Design: DesignClassic, Names: p.Names}, o, []string{"amqp://127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("newEngine: %v, want %q", err, c.want)
			}
		})
	}
}

// The trust verdict's retention note reads the statistic by results' name for it.
func TestRetentionStatIsTheResultsName(t *testing.T) {
	if RetentionDeletedStat != results.StatRetentionDeleted {
		t.Fatalf("rabbitq writes %q, results reads %q", RetentionDeletedStat, results.StatRetentionDeleted)
	}
}

// The stream's retention on a queue design is refused at validation (the registration's Check),
// naming the key; a matrix over designs defers to each cell.
func TestRetentionOnAQueueDesignIsRefused(t *testing.T) {
	o := DefaultOptions()
	o.MaxAge = time.Minute
	cases := []struct {
		plan  engines.Plan
		field string
	}{
		{engines.Plan{Design: DesignClassic}, "max_age"},
		{engines.Plan{Design: DesignQuorum}, "max_age"},
		{engines.Plan{Design: DesignStream}, ""},
		{engines.Plan{Design: DesignClassic, AnyDesign: true}, ""},
	}
	for _, c := range cases {
		err := checkPlan(o, c.plan)
		var fe interface{ Field() string }
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%+v: %v", c.plan, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field() != c.field):
			t.Errorf("%+v: got %v, want an error on %s", c.plan, err, c.field)
		}
	}
}
