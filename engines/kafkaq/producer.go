package kafkaq

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"qbench/engines"
)

// producer writes through one asynchronous kafka.Writer, the way Kafka's own clients produce:
// messages from every concurrent Send (the runner keeps up to in_flight of them per producer)
// join per-partition batches that leave when full (batch.size bytes or batch.messages) or after
// linger.ms, and each message is answered by the Writer's Completion once the broker acknowledged
// its batch at the scenario's acks level, or the batch failed. Send returns when every message it
// placed is answered.
type producer struct {
	w         *kafka.Writer
	calls     sync.Pool // *sendCall, reused once every message of a call is answered
	closeOnce sync.Once
	closeErr  error
	// batches and messages count what Completion answered: one kafka-go batch is one Produce
	// request for one partition (retries not counted), so messages/batches is records per request.
	batches, messages atomic.Int64
}

// sendCall is one Send's messages and answers. Its value bytes are a copy of the payloads, so
// that a Send abandoned at ctx's end (the Writer may still be writing) keeps the contract that
// Send does not retain payloads; an abandoned call is never reused.
type sendCall struct {
	msgs    []kafka.Message
	refs    []msgRef
	errs    []error
	buf     []byte
	pending atomic.Int64
	done    chan struct{}
}

// msgRef is a message's WriterData: which call and which message of it.
type msgRef struct {
	call *sendCall
	i    int
}

func (e *engine) NewProducer(ctx context.Context, id int) (engines.Producer, error) {
	p := &producer{}
	p.w = &kafka.Writer{
		Addr:         kafka.TCP(e.bootstrap...),
		Topic:        e.topic,
		Transport:    e.transport,
		Balancer:     balancer(e.opts.byProducer, id),
		RequiredAcks: e.opts.acks,
		BatchTimeout: e.opts.linger,
		BatchSize:    e.opts.batchMessages,
		BatchBytes:   e.opts.batchBytes,
		Compression:  e.opts.compression,
		// Retries of a failed produce are Kafka's own client behaviour, and what carries a
		// producer over a broker restart; they show up as produce latency.
		MaxAttempts:     10,
		WriteBackoffMin: 50 * time.Millisecond,
		WriteBackoffMax: time.Second,
		Async:           true,
		Completion:      p.complete,
	}
	if err := e.opened.Track(p); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.producers = append(e.producers, p)
	e.mu.Unlock()
	return p, nil
}

// complete answers the messages of one batch: err is the broker's (or the last retry's) answer
// for all of them. It runs on the Writer's partition goroutines, concurrently for different
// batches; every message is answered exactly once.
func (p *producer) complete(msgs []kafka.Message, err error) {
	p.batches.Add(1)
	p.messages.Add(int64(len(msgs)))
	for i := range msgs {
		r, ok := msgs[i].WriterData.(*msgRef)
		if !ok {
			continue
		}
		c := r.call
		c.errs[r.i] = err
		if c.pending.Add(-1) == 0 {
			close(c.done)
		}
	}
}

// balancer spreads messages over partitions round robin (no key, the default), or puts all of
// producer id's messages on partition id mod partitions, the effect of keying by producer with
// fewer collisions than hashing: per-producer order then holds across the topic.
func balancer(byProducer bool, id int) kafka.Balancer {
	if !byProducer {
		return &kafka.RoundRobin{}
	}
	return kafka.BalancerFunc(func(_ kafka.Message, partitions ...int) int {
		return partitions[id%len(partitions)]
	})
}

func (p *producer) call(payloads [][]byte) *sendCall {
	c, _ := p.calls.Get().(*sendCall)
	if c == nil {
		c = &sendCall{}
	}
	n, size := len(payloads), 0
	for _, b := range payloads {
		size += len(b)
	}
	c.msgs, c.refs, c.errs = c.msgs[:0], c.refs[:0], c.errs[:0]
	c.buf = c.buf[:0]
	if cap(c.buf) < size {
		c.buf = make([]byte, 0, size)
	}
	for i, b := range payloads {
		c.buf = append(c.buf, b...)
		c.refs = append(c.refs, msgRef{call: c, i: i})
		c.errs = append(c.errs, nil)
	}
	off := 0
	for i, b := range payloads {
		c.msgs = append(c.msgs, kafka.Message{Value: c.buf[off : off+len(b) : off+len(b)], WriterData: &c.refs[i]})
		off += len(b)
	}
	c.pending.Store(int64(n))
	c.done = make(chan struct{})
	return c
}

// Send places the batch's messages in the Writer's per-partition batches and waits until each is
// answered. With acks=none the broker sends no reply, so nil means only "written to the socket".
// If ctx ends first, the unanswered messages fail with ctx's error (the Writer may still deliver
// them: a write whose outcome the producer never learned).
func (p *producer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	if len(payloads) == 0 {
		return
	}
	c := p.call(payloads)
	if err := p.w.WriteMessages(ctx, c.msgs...); err != nil {
		// Nothing was placed (a closed Writer: io.ErrClosedPipe; no metadata; too large).
		for i := range errs {
			errs[i] = err
		}
		p.release(c)
		return
	}
	select {
	case <-c.done:
		copy(errs, c.errs)
		p.release(c)
	case <-ctx.Done():
		// c.errs may still be written by Completion: every message fails with ctx's error, and
		// the call is abandoned to the Writer, never reused.
		err := ctx.Err()
		for i := range errs {
			errs[i] = err
		}
	}
}

func (p *producer) release(c *sendCall) {
	clear(c.msgs) // drop references to the values and refs before pooling
	p.calls.Put(c)
}

// Close flushes and closes the writer (it waits for every Completion). Later calls return nil,
// and a Send after Close fails every message with io.ErrClosedPipe, which is what kafka-go
// returns.
func (p *producer) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.w.Close() })
	return p.closeErr
}
