package rabbitq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"qbench/engines"
)

// adminChannel opens a channel on the admin connection, dialling it again after a fault closed
// it. A passive declare of a missing queue closes its channel, so each reading gets its own.
func (e *engine) adminChannel() (*amqp.Channel, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.admin == nil || e.admin.IsClosed() {
		var err error
		for i := range len(e.urls) {
			if e.admin, err = e.dial(i); err == nil {
				break
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return e.admin.Channel()
}

// Lag is the messages ready in the run's queues (a passive declare's count). AMQP does not say
// how many are delivered and unacknowledged, so Pending stays 0. A stream keeps every message,
// read or not: its count is no backlog, and it reports none.
func (e *engine) Lag(ctx context.Context) (engines.Lag, error) {
	var lag engines.Lag
	if e.spec.Design == DesignStream {
		return lag, nil
	}
	ch, err := e.adminChannel()
	if err != nil {
		return lag, err
	}
	defer ch.Close()
	for g := range e.queues() {
		q, err := ch.QueueDeclarePassive(e.queueOf(g), true, false, false, false, e.queueArgs())
		if err != nil {
			return engines.Lag{}, err
		}
		lag.Backlog += int64(q.Messages)
	}
	return lag, nil
}

// sweepIdle ends the read of a stream once no message has come for this long, where no end
// marker could be written (a named stream of an existing system). A stream's consumer may pause
// longer than this between chunks on a loaded machine, which is why a run's own stream is read
// to its end marker instead.
const sweepIdle = 500 * time.Millisecond

// sweepEndPrefix starts the body of the marker the sweep appends to a run's own stream: read up
// to it, the sweep has seen everything the stream held when it began.
const sweepEndPrefix = "qbench-sweep-end:"

// sweepMarkerWait bounds a quiet wait for the end marker: past it the sweep fails, saying so,
// rather than count what it did not read as lost.
const sweepMarkerWait = 15 * time.Second

// sweepReattachAfter is how long the sweep's reader may stay silent, with the end marker still to
// come, before it is cancelled and a new one attached just past the last offset read. Retention
// that overtakes a reader deletes the segment it was to read next; the broker then either skips
// the reader to the new first segment (a gap: those messages are gone and are counted as
// retention's) or, in some versions, leaves it waiting at what it takes for the stream's end.
const sweepReattachAfter = 3 * time.Second

// Sweep reads what the queues still hold without losing it. A classic or quorum queue is
// browsed with basic.get without acknowledging and the channel then closed, which returns every
// message to the queue in its place (marked redelivered; a quorum queue counts one more
// delivery, so a queue with a delivery-limit could dead-letter one). A stream is read from its
// first offset: it keeps everything, and the ledger ignores what was already delivered.
func (e *engine) Sweep(ctx context.Context, found func(group int, payload []byte)) error {
	ch, err := e.adminChannel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if e.spec.Design == DesignStream {
		return e.sweepStream(ctx, ch, found)
	}
	for g := range e.queues() {
		for ctx.Err() == nil {
			d, ok, err := ch.Get(e.queueOf(g), false)
			if err != nil {
				return fmt.Errorf("%s: sweep %s: %w", e.name, e.queueOf(g), err)
			}
			if !ok {
				break
			}
			found(g, d.Body)
		}
	}
	return ctx.Err()
}

func (e *engine) sweepStream(ctx context.Context, ch *amqp.Channel, found func(group int, payload []byte)) error {
	if err := ch.Qos(1000, 0, false); err != nil {
		return err
	}
	// The end marker goes into a run's own stream only: a named one belongs to another system.
	// Published on this channel before the consumer starts, it lands after everything the
	// stream held; if it cannot be published, the read falls back to the idle rule.
	var end []byte
	if !e.named {
		marker := []byte(fmt.Sprintf("%s%s:%d", sweepEndPrefix, e.spec.RunID, time.Now().UnixNano()))
		if ch.PublishWithContext(ctx, "", e.queueOf(0), false, false, amqp.Publishing{Body: marker}) == nil {
			end = marker
		}
	}
	r := streamSweep{e: e, ch: ch, end: end, found: found, next: -1,
		markerWait: sweepMarkerWait, reattachAfter: sweepReattachAfter}
	return r.read(ctx)
}

// streamSweep is one sweep's read of a run's stream, by one reader and then, if it goes silent
// before the end marker, by another attached just past the last offset read.
type streamSweep struct {
	e     *engine
	ch    *amqp.Channel
	end   []byte
	found func(group int, payload []byte)
	// next is the offset after the last delivery read (-1 before one); n counts the run's
	// messages read; reattached counts the readers attached after the first.
	next       int64
	n          int64
	reattached int
	tag        string
	deliveries <-chan amqp.Delivery
	// markerWait and reattachAfter are sweepMarkerWait and sweepReattachAfter.
	markerWait, reattachAfter time.Duration
}

// attach starts a reader at the stream's first offset, or just past the last one read.
func (s *streamSweep) attach() error {
	var from any = "first"
	if s.next >= 0 {
		from = s.next
	}
	s.tag = fmt.Sprintf("qbench-sweep-%d", s.reattached)
	ds, err := s.ch.Consume(s.e.queueOf(0), s.tag, false, false, false, false, amqp.Table{"x-stream-offset": from})
	s.deliveries = ds
	return err
}

// take reads one delivery and says whether it was this sweep's end marker. A delivery at an
// offset already read (a reader attached again is sent its first chunk whole) is skipped.
func (s *streamSweep) take(d amqp.Delivery) (end bool) {
	_ = d.Ack(false)
	if off, ok := d.Headers["x-stream-offset"].(int64); ok {
		if off < s.next {
			return false
		}
		s.next = off + 1
	}
	if bytes.HasPrefix(d.Body, []byte(sweepEndPrefix)) {
		return s.end != nil && bytes.Equal(d.Body, s.end) // else an earlier sweep's marker
	}
	s.n++
	for g := range s.e.Groups() {
		s.found(g, d.Body)
	}
	return false
}

func (s *streamSweep) read(ctx context.Context) error {
	if err := s.attach(); err != nil {
		return err
	}
	t := time.NewTimer(sweepIdle)
	defer t.Stop()
	var waited, silent time.Duration
	for {
		select {
		case d, ok := <-s.deliveries:
			if !ok {
				return errors.New(s.e.name + ": sweep: the stream's consumer was cancelled")
			}
			if s.take(d) {
				s.e.swept.Store(s.n)
				return nil
			}
			waited, silent = 0, 0
			t.Reset(sweepIdle)
		case <-t.C:
			if s.end == nil {
				s.e.swept.Store(s.n)
				return nil
			}
			if waited >= s.markerWait {
				return fmt.Errorf("%s: sweep: read %d messages and no end marker came in %s (%d readers attached again past the last offset read)",
					s.e.name, s.n, s.markerWait, s.reattached)
			}
			// The marker is coming: the stream is read to it, by a new reader once this one
			// has been silent for sweepReattachAfter.
			waited += sweepIdle
			silent += sweepIdle
			t.Reset(sweepIdle)
			if silent < s.reattachAfter {
				continue
			}
			silent = 0
			if err := s.ch.Cancel(s.tag, false); err != nil {
				return err
			}
			for d := range s.deliveries { // what the old reader was sent before the cancel
				if s.take(d) {
					s.e.swept.Store(s.n)
					return nil
				}
			}
			s.reattached++
			if err := s.attach(); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Facts records what ran: the broker's version and the run's settings.
func (e *engine) Facts(ctx context.Context) engines.Facts {
	f := engines.Facts{Name: e.name, Design: e.spec.Design, Version: "unknown",
		Settings: map[string]string{
			"client":     "github.com/rabbitmq/amqp091-go",
			"exchange":   e.exchange,
			"queue_type": e.spec.Design,
			"persistent": strconv.FormatBool(*e.opts.Persistent),
			"confirms":   strconv.FormatBool(*e.opts.Confirms),
			"prefetch":   strconv.Itoa(e.opts.Prefetch),
			"replicas":   strconv.Itoa(e.opts.Replicas),
			"groups":     strconv.Itoa(e.opts.Groups),
		}}
	if e.named { // an existing system's queue, published to through the default exchange
		f.Settings["exchange"], f.Settings["queue"] = "(default)", e.queue
	}
	if e.spec.Design == DesignStream {
		for k, v := range map[string]int64{"max_length_bytes": e.opts.MaxLengthBytes,
			"max_age_seconds": int64(e.opts.MaxAge / time.Second), "max_segment_size_bytes": e.opts.MaxSegmentSizeBytes} {
			if v > 0 {
				f.Settings[k] = strconv.FormatInt(v, 10)
			}
		}
		// Without retention a gap is a loss, not a deletion; a named stream holds other runs'
		// messages too, so the sweep's count says nothing of this run's retention.
		if n := e.swept.Load(); n >= 0 && e.opts.retains() && !e.named {
			f.Stats = map[string]int64{RetentionDeletedStat: max(e.published.Load()-n, 0)}
		}
	}
	e.mu.Lock()
	if e.admin != nil && !e.admin.IsClosed() {
		if v, ok := e.admin.Properties["version"].(string); ok {
			f.Version = v
		}
	}
	e.mu.Unlock()
	return f
}

// RetentionDeletedStat is the engine stat counting the messages the broker acknowledged into the
// stream and the final sweep no longer found in it: what retention deleted from its head, read
// or not (a fault that loses acknowledged messages would add its own). Those nobody had read are
// in the run's lost count: gone, as a trimmed Redis stream's are. (The offset of the first
// message left is no count of messages: the stream's bookkeeping entries take offsets too.)
const RetentionDeletedStat = "retention_deleted"

// notePending records what consumer id held unacknowledged as it closed.
func (e *engine) notePending(id int, n int64) {
	if id >= 0 && id < len(e.pending) {
		e.pending[id].Store(n)
	}
}

// PendingByConsumer is what each consumer of a classic or quorum queue held delivered and
// unacknowledged when it closed: its channel's unacknowledged deliveries, which the broker
// returned to the queue when the channel closed (so the final sweep finds them as queued). It is
// counted by the client, which knows it exactly (consumer.unacked): the broker's own per-channel
// count (rabbitmqctl list_channels) is gone once the channel has closed, which it has by the
// time the runner asks. A stream keeps no unacknowledged state worth the name (acknowledgements
// only grant credit; nothing is redelivered): ErrNothingStored.
func (e *engine) PendingByConsumer(ctx context.Context, consumers int) ([]int64, error) {
	if e.spec.Design == DesignStream {
		return nil, engines.ErrNothingStored
	}
	out := make([]int64, consumers)
	for i := range out {
		if i < len(e.pending) {
			out[i] = e.pending[i].Load()
		}
	}
	return out, nil
}
