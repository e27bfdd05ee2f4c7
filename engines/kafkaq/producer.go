package kafkaq

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"qbench/engines"
)

// producer writes with a synchronous kafka.Writer: Send returns when every message of the batch
// is acknowledged at the scenario's acks level or has failed.
type producer struct {
	w         *kafka.Writer
	msgs      []kafka.Message // reused between Sends
	closeOnce sync.Once
	closeErr  error
}

func (e *engine) NewProducer(ctx context.Context, id int) (engines.Producer, error) {
	p := &producer{w: &kafka.Writer{
		Addr:         kafka.TCP(e.bootstrap...),
		Topic:        e.topic,
		Transport:    e.transport,
		Balancer:     balancer(e.opts.byProducer, id),
		RequiredAcks: e.opts.acks,
		BatchTimeout: e.opts.linger,
		Compression:  e.opts.compression,
		// Retries of a failed produce are Kafka's own client behaviour, and what carries a
		// producer over a broker restart; they show up as produce latency.
		MaxAttempts:     10,
		WriteBackoffMin: 50 * time.Millisecond,
		WriteBackoffMax: time.Second,
	}}
	if err := e.track(p); err != nil {
		return nil, err
	}
	return p, nil
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

// Send writes the batch with one WriteMessages call. BatchSize is the batch's length, so a
// partition's share never waits for more messages: it leaves when Send has placed it, after at
// most linger.ms. With acks=none the broker sends no reply, so nil means only "written to the
// socket".
func (p *producer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	if len(payloads) == 0 {
		return
	}
	p.msgs = p.msgs[:0]
	for _, b := range payloads {
		p.msgs = append(p.msgs, kafka.Message{Value: b})
	}
	// Read only on this goroutine, in WriteMessages, so changing it between calls is safe.
	p.w.BatchSize = len(payloads)
	err := p.w.WriteMessages(ctx, p.msgs...)
	var werrs kafka.WriteErrors
	switch {
	case err == nil:
		clear(errs)
	case errors.As(err, &werrs) && len(werrs) == len(payloads):
		copy(errs, werrs)
	default:
		for i := range errs {
			errs[i] = err
		}
	}
	// The writer kept no reference to Value once WriteMessages returned, except after a
	// canceled ctx, when kafka-go may still be writing; drop ours either way.
	clear(p.msgs)
}

// Close flushes and closes the writer. Later calls return nil, and a Send after Close fails
// every message with io.ErrClosedPipe, which is what kafka-go returns.
func (p *producer) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.w.Close() })
	return p.closeErr
}
