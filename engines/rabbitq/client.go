package rabbitq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"qbench/engines"
)

// receiveWait is how long Receive waits for a first message (the seam's "about 100 ms").
const receiveWait = 100 * time.Millisecond

// errNacked is a publish the broker refused to confirm.
var errNacked = errors.New("rabbitmq: publish nacked by the broker")

// session is a connection and one channel on it, dialled again after the broker or the node
// went away (amqp091-go does not reconnect by itself).
type session struct {
	e    *engine
	node int // the address to dial first
	mu   sync.Mutex
	conn *amqp.Connection
	ch   *amqp.Channel
	// setup prepares a new channel (confirm mode, qos, consume).
	setup func(ch *amqp.Channel) error
}

// channel returns the open channel, dialling a new connection when the last one closed. One
// dial per call: a broker that is down fails the call, and the caller's next call tries again.
func (s *session) channel() (*amqp.Channel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil && !s.ch.IsClosed() {
		return s.ch, nil
	}
	if s.conn != nil {
		s.conn.Close()
		s.conn, s.ch = nil, nil
	}
	var err error
	for i := range len(s.e.urls) {
		if s.conn, err = s.e.dial(s.node + i); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	ch, err := s.conn.Channel()
	if err == nil && s.setup != nil {
		err = s.setup(ch)
	}
	if err != nil {
		s.conn.Close()
		s.conn = nil
		return nil, err
	}
	s.ch = ch
	return ch, nil
}

// current is the open channel, nil when there is none; it never dials.
func (s *session) current() *amqp.Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil || s.ch.IsClosed() {
		return nil
	}
	return s.ch
}

func (s *session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		err := s.conn.Close()
		s.conn, s.ch = nil, nil
		if errors.Is(err, amqp.ErrClosed) {
			return nil
		}
		return err
	}
	return nil
}

// producer publishes to the run's exchange on a channel of its own (in confirm mode when
// confirms are on); its in-flight Sends share the channel.
type producer struct {
	e *engine
	s *session
	// rets watches the current channel's returns (confirms only: a confirmed publish counts as
	// acknowledged unless the broker returned it).
	rets atomic.Pointer[returns]
}

// NewProducer opens producer id's connection.
func (e *engine) NewProducer(ctx context.Context, id int) (engines.Producer, error) {
	p := &producer{e: e, s: &session{e: e, node: id}}
	if *e.opts.Confirms {
		p.s.setup = func(ch *amqp.Channel) error {
			p.rets.Store(watchReturns(ch))
			return ch.Confirm(false)
		}
	}
	if _, err := p.s.channel(); err != nil {
		return nil, fmt.Errorf("%s: producer %d: %w", e.name, id, err)
	}
	if err := e.opened.Track(p.s); err != nil {
		return nil, err
	}
	return p, nil
}

// Send publishes the batch and, with confirms, waits for the broker to confirm each message
// (for a persistent message to a durable queue: written to disk, and for a quorum queue to a
// majority). Without confirms a message counts as acknowledged once written to the socket.
//
// With confirms the publishes are mandatory: RabbitMQ confirms a message it routed to no queue
// as well, and says so only to a mandatory publish (basic.return before the confirm). Such a
// message failed; counted acknowledged, it would be lost without any fault of the store.
func (p *producer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	ch, err := p.s.channel()
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return
	}
	rets := p.rets.Load()
	if rets != nil && rets.ch != ch {
		rets = nil // replaced since: ch has closed, and its publishes fail
	}
	mode := amqp.Transient
	if *p.e.opts.Persistent {
		mode = amqp.Persistent
	}
	confirms := make([]*amqp.DeferredConfirmation, len(payloads))
	for i, b := range payloads {
		// The frame is written before this returns: the runner may reuse b afterwards.
		confirms[i], errs[i] = ch.PublishWithDeferredConfirmWithContext(ctx, p.e.exchange, p.e.routingKey, *p.e.opts.Confirms, false,
			amqp.Publishing{DeliveryMode: mode, Body: b})
	}
	for i, dc := range confirms {
		if errs[i] != nil || dc == nil {
			continue
		}
		acked, err := dc.WaitContext(ctx)
		switch {
		case err != nil:
			errs[i] = err
		case !acked:
			errs[i] = errNacked
		}
	}
	if rets != nil {
		rets.fail(payloads, errs)
	}
	for _, err := range errs {
		if err == nil {
			p.e.published.Add(1)
		}
	}
}

func (p *producer) Close() error { return p.s.Close() }

// consumer reads its group's queue with manual acknowledgements and a prefetch.
type consumer struct {
	e          *engine
	s          *session
	id         int
	tag        string
	deliveries <-chan amqp.Delivery
	out        []engines.Delivery
	// held counts the deliveries Receive handed out on the current channel and Ack has not
	// acknowledged; a new channel starts at 0 (the old one's went back to the queue with it).
	held atomic.Int64
}

// NewConsumer opens consumer id on its group's queue.
func (e *engine) NewConsumer(ctx context.Context, id int) (engines.Consumer, error) {
	c := &consumer{e: e, id: id, tag: "qbench-" + strconv.Itoa(id)}
	c.s = &session{e: e, node: id, setup: func(ch *amqp.Channel) error {
		c.held.Store(0)
		if err := ch.Qos(e.opts.Prefetch, 0, false); err != nil {
			return err
		}
		var args amqp.Table
		if e.spec.Design == DesignStream {
			args = amqp.Table{"x-stream-offset": "first"}
		}
		d, err := ch.Consume(e.queueOf(e.GroupOf(id)), c.tag, false, false, false, false, args)
		c.deliveries = d
		return err
	}}
	if _, err := c.s.channel(); err != nil {
		return nil, fmt.Errorf("%s: consumer %d: %w", e.name, id, err)
	}
	if err := e.opened.Track(c.s); err != nil {
		return nil, err
	}
	return c, nil
}

// Receive waits up to receiveWait for a first delivery, then takes what else has arrived.
func (c *consumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	c.out = c.out[:0]
	if _, err := c.s.channel(); err != nil {
		// The broker is away (a fault): wait out the receive time rather than spin.
		select {
		case <-time.After(receiveWait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return nil, err
	}
	t := time.NewTimer(receiveWait)
	defer t.Stop()
	select {
	case d, ok := <-c.deliveries:
		if !ok {
			return nil, ctx.Err() // the channel closed: the next Receive dials again
		}
		c.add(d)
	case <-t.C:
		return nil, ctx.Err()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for len(c.out) < c.e.opts.Prefetch {
		select {
		case d, ok := <-c.deliveries:
			if !ok {
				return c.out, nil
			}
			c.add(d)
		default:
			return c.out, nil
		}
	}
	return c.out, nil
}

func (c *consumer) add(d amqp.Delivery) {
	c.out = append(c.out, engines.Delivery{Payload: d.Body, Handle: d})
	c.held.Add(1)
}

// Ack acknowledges each delivery on the channel it came from; one whose channel has closed
// since is redelivered by the broker.
func (c *consumer) Ack(ctx context.Context, ds []engines.Delivery) error {
	cur := c.s.current()
	var errs []error
	for _, d := range ds {
		if del, ok := d.Handle.(amqp.Delivery); ok {
			err := del.Ack(false)
			if err == nil && cur != nil && del.Acknowledger == amqp.Acknowledger(cur) {
				c.held.Add(-1)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// closeWait bounds how long Close waits for the broker to end the consumer (basic.cancel) before
// it closes the connection regardless.
const closeWait = 2 * time.Second

// Close records what the consumer holds unacknowledged (engine.PendingByConsumer) and closes its
// connection, which returns those messages to the queue.
func (c *consumer) Close() error {
	if c.e.spec.Design != DesignStream {
		c.e.notePending(c.id, c.unacked())
	}
	return c.s.Close()
}

// unacked is the broker's count of this consumer's delivered and unacknowledged messages, as
// the client can know it exactly: basic.cancel stops further deliveries, the deliveries that
// arrived before its answer (prefetched, not yet received) are drained and counted, and those
// Receive handed out and Ack did not acknowledge are added. A channel that is already closed
// holds nothing (the broker returned its messages to the queue when it closed). When the broker
// does not answer within closeWait, the count leaves the prefetched ones out.
func (c *consumer) unacked() int64 {
	ch := c.s.current()
	if ch == nil {
		return 0
	}
	held := c.held.Load()
	done := make(chan int64, 1)
	go func() {
		var n int64
		if err := ch.Cancel(c.tag, false); err == nil {
			for range c.deliveries {
				n++
			}
		}
		done <- n
	}()
	select {
	case n := <-done:
		return held + n
	case <-time.After(closeWait):
		return held
	}
}
