package kafkaq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"qbench/engines"
)

const (
	// receiveWait bounds one Receive while nothing arrives.
	receiveWait = 100 * time.Millisecond
	// drainGap is how long Receive waits for the next message once one has arrived. A fetch
	// response lands in the reader's queue all at once, so a short gap collects the rest of it.
	drainGap = 200 * time.Microsecond
	// maxReceive caps the deliveries of one Receive, and so the messages of one commit.
	maxReceive = 256
	// groupStableWait bounds how long the last consumer waits for the group to settle.
	groupStableWait = 60 * time.Second
)

// offset is a delivery's Handle: what CommitMessages needs, and nothing that pins the payload.
type offset struct {
	partition int
	offset    int64
}

// consumer is one member of the run's consumer group. Ack commits offsets synchronously after
// the work (CommitInterval 0), so a consumer that dies before Ack leaves its messages to be
// delivered again to whichever member gets the partition.
type consumer struct {
	r     *kafka.Reader
	topic string

	closeOnce sync.Once
	closeErr  error
}

func (e *engine) NewConsumer(ctx context.Context, id int) (engines.Consumer, error) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:     e.bootstrap,
		GroupID:     e.group,
		Topic:       e.topic,
		Dialer:      &kafka.Dialer{Timeout: 5 * time.Second, ClientID: fmt.Sprintf("qbench-c%d", id)},
		StartOffset: kafka.FirstOffset,
		MinBytes:    1,
		MaxBytes:    8 << 20,
		// The broker answers a fetch as soon as MinBytes are there; MaxWait only bounds an idle
		// fetch, and so how late a reader notices a rebalance.
		MaxWait:           500 * time.Millisecond,
		CommitInterval:    e.opts.commitInterval, // 0: synchronous commits in Ack
		HeartbeatInterval: 500 * time.Millisecond,
		SessionTimeout:    6 * time.Second, // the broker's group.min.session.timeout.ms
		RebalanceTimeout:  10 * time.Second,
		JoinGroupBackoff:  500 * time.Millisecond,
		ReadBackoffMin:    50 * time.Millisecond,
		ReadBackoffMax:    500 * time.Millisecond,
	})
	c := &consumer{r: r, topic: e.topic}
	if err := e.opened.Track(c); err != nil { // closes c, and with it r
		return nil, err
	}
	// The runner opens every consumer before the first producer: when the last one is first
	// opened, wait until the group has settled with all of them, so that producing does not
	// start in the middle of a rebalance (which would redeliver prefetched messages). A consumer
	// reopened during the run (after a crash fault) does not wait: others may be down for good.
	e.mu.Lock()
	wait := id == e.spec.Consumers-1 && !e.settled
	e.settled = e.settled || wait
	e.mu.Unlock()
	if wait {
		if err := e.waitGroupStable(ctx, e.spec.Consumers); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// waitGroupStable waits until DescribeGroups shows the group Stable with n members that between
// them hold every partition.
func (e *engine) waitGroupStable(ctx context.Context, n int) error {
	ctx, cancel := context.WithTimeout(ctx, groupStableWait)
	defer cancel()
	var last string
	for {
		r, err := e.client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{e.group}})
		switch {
		case err != nil:
			last = err.Error()
		case len(r.Groups) != 1:
			last = "group not described"
		case r.Groups[0].Error != nil:
			last = r.Groups[0].Error.Error()
		default:
			g := r.Groups[0]
			assigned := 0
			for _, m := range g.Members {
				for _, t := range m.MemberAssignments.Topics {
					if t.Topic == e.topic {
						assigned += len(t.Partitions)
					}
				}
			}
			if g.GroupState == "Stable" && len(g.Members) == n && assigned == e.opts.partitions {
				return nil
			}
			last = fmt.Sprintf("state %s, %d of %d members, %d of %d partitions assigned", g.GroupState, len(g.Members), n, assigned, e.opts.partitions)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: consumer group %s did not settle: %w (%s)", e.name, e.group, ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Receive waits up to receiveWait for a first message, then collects what follows within
// drainGap of each other, up to maxReceive. Canceling FetchMessage is safe: it only stops
// waiting on the reader's queue, nothing is taken from it.
func (c *consumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []engines.Delivery
	wait := receiveWait
	for len(out) < maxReceive {
		fctx, cancel := context.WithTimeout(ctx, wait)
		m, err := c.r.FetchMessage(fctx)
		cancel()
		if err != nil {
			// Never drop what was taken: the reader has moved past it and would not hand it
			// out again before a rebalance. A lasting error shows on the next call.
			switch {
			case len(out) > 0:
				return out, nil
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case errors.Is(err, context.DeadlineExceeded):
				return nil, nil
			}
			return nil, fmt.Errorf("kafka: fetch: %w", err)
		}
		out = append(out, engines.Delivery{Payload: m.Value, Handle: offset{m.Partition, m.Offset}, Shard: m.Partition})
		wait = drainGap
	}
	return out, nil
}

// Ack commits, per partition, the offset after the highest delivery acknowledged: before it
// returns by default, or on kafka-go's next commit tick with commit.interval.ms, when a crash
// loses the commits of the last interval (more redelivery) in exchange for fewer round trips.
func (c *consumer) Ack(ctx context.Context, ds []engines.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	msgs := make([]kafka.Message, len(ds))
	for i, d := range ds {
		o, ok := d.Handle.(offset)
		if !ok {
			return fmt.Errorf("kafka: ack: handle %T is not from this engine", d.Handle)
		}
		msgs[i] = kafka.Message{Topic: c.topic, Partition: o.partition, Offset: o.offset}
	}
	if err := c.r.CommitMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("kafka: commit: %w", err)
	}
	return nil
}

// Close leaves the group (LeaveGroup, so the rebalance starts at once rather than after the
// session timeout) without committing anything not yet acknowledged. Later calls return nil.
func (c *consumer) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.r.Close() })
	return c.closeErr
}
