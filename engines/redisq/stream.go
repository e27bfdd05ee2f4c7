package redisq

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// streamDesign: producers XADD to one stream; consumers read it in one consumer group with
// XREADGROUP, first their own pending entries (ID 0, after a restart) and then new ones (>), and
// XACK after the work (or before it, or NOACK).
type streamDesign struct {
	client *redis.Client
	spec   engines.Spec
	key    string
	group  string
}

const streamField = "d"

func newStreamDesign(client *redis.Client, spec engines.Spec) *streamDesign {
	return &streamDesign{client: client, spec: spec, key: keyPrefix(spec) + "stream", group: "qbench"}
}

func (s *streamDesign) setup(ctx context.Context) error {
	start := s.spec.Stream.GroupStart
	if start == "" {
		start = "0"
	}
	err := s.client.XGroupCreateMkStream(ctx, s.key, s.group, start).Err()
	if err != nil && strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return nil
	}
	return err
}

func (s *streamDesign) teardown(ctx context.Context) error {
	return s.client.Del(ctx, s.key).Err()
}

func (s *streamDesign) addArgs(payload []byte) *redis.XAddArgs {
	a := &redis.XAddArgs{Stream: s.key, ID: "*", Values: []any{streamField, payload}}
	if s.spec.Stream.MaxLen > 0 {
		a.MaxLen = s.spec.Stream.MaxLen
		a.Approx = !s.spec.Stream.ExactTrim
	}
	return a
}

type streamProducer struct {
	s *streamDesign
}

func (s *streamDesign) newProducer(int) engines.Producer { return &streamProducer{s: s} }

func (p *streamProducer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	if len(payloads) == 1 {
		errs[0] = p.s.client.XAdd(ctx, p.s.addArgs(payloads[0])).Err()
		return
	}
	cmds := make([]*redis.StringCmd, len(payloads))
	_, _ = p.s.client.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, pl := range payloads {
			cmds[i] = pipe.XAdd(ctx, p.s.addArgs(pl))
		}
		return nil
	})
	for i, c := range cmds {
		errs[i] = c.Err()
	}
}

func (p *streamProducer) Close() error { return nil }

type streamConsumer struct {
	s    *streamDesign
	name string
	// replaying is true while the consumer reads its own pending entries (ID 0).
	replaying bool
}

func (s *streamDesign) newConsumer(_ context.Context, id int) (engines.Consumer, error) {
	return &streamConsumer{s: s, name: consumerName(id), replaying: true}, nil
}

func consumerName(id int) string { return "c" + strconv.Itoa(id) }

func (c *streamConsumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	opts := c.s.spec.Stream
	block := opts.Block
	if block <= 0 {
		block = 100 * time.Millisecond
	}
	id := ">"
	if c.replaying {
		id = "0"
	}
	args := &redis.XReadGroupArgs{
		Group: c.s.group, Consumer: c.name, Streams: []string{c.s.key, id},
		Count: opts.Count, NoAck: opts.Ack == "noack",
	}
	if !c.replaying {
		args.Block = block
	} else {
		args.Block = -1 // no BLOCK: the pending history is answered at once
	}
	res, err := c.s.client.XReadGroup(ctx, args).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ds []engines.Delivery
	for _, st := range res {
		for _, m := range st.Messages {
			v, ok := m.Values[streamField].(string)
			if !ok {
				continue // an entry deleted while pending comes back with no fields
			}
			ds = append(ds, engines.Delivery{Payload: []byte(v), Handle: m.ID})
		}
	}
	if c.replaying && len(ds) == 0 {
		c.replaying = false
	}
	if opts.Ack == "before" && len(ds) > 0 {
		if err := c.xack(ctx, ds); err != nil {
			return ds, err
		}
	}
	return ds, nil
}

func (c *streamConsumer) Ack(ctx context.Context, ds []engines.Delivery) error {
	if c.s.spec.Stream.Ack != "after" && c.s.spec.Stream.Ack != "" {
		return nil
	}
	return c.xack(ctx, ds)
}

func (c *streamConsumer) xack(ctx context.Context, ds []engines.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.Handle.(string)
	}
	return c.s.client.XAck(ctx, c.s.key, c.s.group, ids...).Err()
}

func (c *streamConsumer) Close() error { return nil }

// lag reads the group's lag and pending count (XINFO GROUPS) and the oldest pending entry's idle
// time (XPENDING with COUNT 1).
func (s *streamDesign) lag(ctx context.Context) (engines.Lag, error) {
	groups, err := s.client.XInfoGroups(ctx, s.key).Result()
	if err != nil {
		return engines.Lag{}, err
	}
	var lag engines.Lag
	for _, g := range groups {
		if g.Name != s.group {
			continue
		}
		lag.Backlog = g.Lag
		lag.Pending = g.Pending
	}
	if lag.Pending > 0 {
		p, err := s.client.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: s.key, Group: s.group, Start: "-", End: "+", Count: 1}).Result()
		if err == nil && len(p) > 0 {
			lag.OldestPendingNs = int64(p[0].Idle)
		}
	}
	return lag, nil
}
