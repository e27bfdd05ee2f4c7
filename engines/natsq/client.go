package natsq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"qbench/engines"
)

// receiveWait is how long Receive waits for a first message (the seam's "about 100 ms").
const receiveWait = 100 * time.Millisecond

// publishAckTimeout is how long a publish waits for its acknowledgement before it fails: the
// client's own default for a synchronous publish (a JetStream API request). The message may
// still have been stored; if a consumer gets it, the ledger counts it failed but delivered.
const publishAckTimeout = 5 * time.Second

// producer publishes on a connection of its own; its in-flight Sends share it.
type producer struct {
	e  *engine
	nc *nats.Conn
	js jetstream.JetStream
}

// NewProducer opens producer id's connection.
func (e *engine) NewProducer(ctx context.Context, id int) (engines.Producer, error) {
	nc, err := e.connect("qbench-producer-" + strconv.Itoa(id))
	if err != nil {
		return nil, err
	}
	p := &producer{e: e, nc: nc}
	if e.spec.Design != DesignCore {
		// Enough outstanding publishes for every in-flight batch of this producer. An
		// acknowledgement lost in a leader change would hold its batch to the end of the run:
		// it times out as a synchronous publish's would (publishAckTimeout).
		if p.js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(max(4096, 2*e.spec.InFlight*256)),
			jetstream.WithPublishAsyncTimeout(publishAckTimeout)); err != nil {
			nc.Close()
			return nil, err
		}
	}
	if err := e.opened.Track(closer{nc}); err != nil {
		return nil, err
	}
	return p, nil
}

// Send publishes the batch and waits for every answer: a JetStream publish acknowledgement
// (the message is stored, and fsynced as sync_interval says), or for core NATS one flush round
// trip after the batch (the server has read it; nothing is stored).
func (p *producer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	if p.js == nil {
		for i, b := range payloads {
			errs[i] = p.nc.Publish(p.e.subject, b)
		}
		err := flush(ctx, p.nc)
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return
	}
	futures := make([]jetstream.PubAckFuture, len(payloads))
	for i, b := range payloads {
		// The future keeps its message for a retry: the runner reuses b.
		m := &nats.Msg{Subject: p.e.subject, Data: append([]byte(nil), b...)}
		var opts []jetstream.PublishOpt
		if p.e.opts.MsgID {
			opts = append(opts, jetstream.WithMsgID(msgID(b)))
		}
		futures[i], errs[i] = p.js.PublishMsgAsync(m, opts...)
	}
	for i, f := range futures {
		if f == nil {
			continue
		}
		select {
		case <-f.Ok():
		case err := <-f.Err():
			errs[i] = err
		case <-ctx.Done():
			errs[i] = ctx.Err()
		}
	}
}

func (p *producer) Close() error { return nil } // the engine closes the connection

// consumer reads a durable pull consumer (JetStream) with one pull request of up to `fetch`
// messages at a time, asked for only when the runner receives, so a paused consumer leaves its
// backlog on the server (as XREADGROUP COUNT does); or a subscription (core), whose messages
// the client's delivery goroutine puts in a buffered channel.
type consumer struct {
	e     *engine
	id    int
	group int
	nc    *nats.Conn
	cons  jetstream.Consumer     // JetStream
	batch jetstream.MessageBatch // the open pull request, nil when none
	sub   *nats.Subscription     // core
	msgs  chan *nats.Msg         // core
	done  chan struct{}          // closed by Close: a delivery blocked on msgs gives up
	once  sync.Once
	out   []engines.Delivery
}

// NewConsumer opens consumer id: it joins its group's durable consumer, or subscribes (and is
// subscribed when this returns, as the seam asks of pub/sub).
func (e *engine) NewConsumer(ctx context.Context, id int) (engines.Consumer, error) {
	nc, err := e.connect("qbench-consumer-" + strconv.Itoa(id))
	if err != nil {
		return nil, err
	}
	c := &consumer{e: e, id: id, group: e.GroupOf(id), nc: nc, done: make(chan struct{})}
	if e.spec.Design == DesignCore {
		c.msgs = make(chan *nats.Msg, 4*e.opts.Fetch)
		c.sub, err = nc.Subscribe(e.subject, func(m *nats.Msg) {
			select {
			case c.msgs <- m:
			case <-c.done:
			}
		})
		if err == nil {
			// A subscriber the server does not know yet misses what is published meanwhile.
			err = flush(ctx, nc)
		}
	} else {
		var js jetstream.JetStream
		if js, err = jetstream.New(nc); err == nil {
			c.cons, err = js.Consumer(ctx, e.stream, e.durable(c.group))
		}
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("%s: consumer %d: %w", e.name, id, err)
	}
	if err := e.opened.Track(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Receive waits up to receiveWait for a first message, then takes what else has arrived.
func (c *consumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	c.out = c.out[:0]
	if c.cons != nil {
		return c.receivePull(ctx)
	}
	t := time.NewTimer(receiveWait)
	defer t.Stop()
	select {
	case m := <-c.msgs:
		c.out = append(c.out, engines.Delivery{Payload: m.Data})
	case <-t.C:
		return nil, ctx.Err()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for len(c.out) < c.e.opts.Fetch {
		select {
		case m := <-c.msgs:
			c.out = append(c.out, engines.Delivery{Payload: m.Data})
		default:
			return c.out, nil
		}
	}
	return c.out, nil
}

// receivePull reads the open pull request, or opens one that expires after receiveWait.
func (c *consumer) receivePull(ctx context.Context) ([]engines.Delivery, error) {
	if c.batch == nil {
		b, err := c.cons.Fetch(c.e.opts.Fetch, jetstream.FetchMaxWait(receiveWait))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The server is away (a fault): wait out the receive time rather than spin.
			select {
			case <-time.After(receiveWait):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return nil, err
		}
		c.batch = b
	}
	msgs := c.batch.Messages()
	t := time.NewTimer(receiveWait)
	defer t.Stop()
	select {
	case m, ok := <-msgs:
		if !ok {
			return nil, c.endBatch(ctx)
		}
		c.take(m)
	case <-t.C:
		return nil, ctx.Err()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				return c.out, c.endBatch(ctx)
			}
			c.take(m)
		default:
			return c.out, nil
		}
	}
}

// take adds a JetStream delivery to the batch Receive returns, held by this consumer until
// acknowledged (PendingByConsumer).
func (c *consumer) take(m jetstream.Msg) {
	c.e.held.delivered(c.group, c.id, m)
	c.out = append(c.out, engines.Delivery{Payload: m.Data(), Handle: m})
}

// endBatch closes the pull request that ended; its error, unless it only expired.
func (c *consumer) endBatch(ctx context.Context) error {
	err := c.batch.Error()
	c.batch = nil
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	// The server is away (a fault): wait out the receive time rather than spin.
	select {
	case <-time.After(receiveWait):
	case <-ctx.Done():
	}
	return err
}

// Ack acknowledges JetStream deliveries (AckSync waits for the server's confirmation when
// ack_sync is set); core deliveries need none.
func (c *consumer) Ack(ctx context.Context, ds []engines.Delivery) error {
	var errs []error
	for _, d := range ds {
		m, ok := d.Handle.(jetstream.Msg)
		if !ok {
			continue
		}
		var err error
		if c.e.opts.AckSync {
			err = m.DoubleAck(ctx)
		} else {
			err = m.Ack()
		}
		if err == nil {
			c.e.held.acked(c.group, m)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Close unsubscribes and closes the connection; what a pull request held unacknowledged is
// redelivered after ack_wait.
func (c *consumer) Close() error {
	c.once.Do(func() {
		if c.sub != nil {
			_ = c.sub.Unsubscribe()
		}
		close(c.done)
		c.nc.Close()
	})
	return nil
}

// flush is one round trip to the server: once it returns nil, the server has read everything
// published before it on nc. A context without a deadline gets flushTimeout.
func flush(ctx context.Context, nc *nats.Conn) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, flushTimeout)
		defer cancel()
	}
	return nc.FlushWithContext(ctx)
}

// flushTimeout bounds a flush whose caller set no deadline.
const flushTimeout = 10 * time.Second
