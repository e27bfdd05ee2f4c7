// Package nullq is the null engine: a bounded Go channel inside qbench's own process, with no
// network, no storage and no acknowledgements to wait for. Send returns as soon as the copy is in
// the channel; Receive takes what is there. What a run on it measures is therefore the load
// generator itself (pacing, stamping, recording, the runner's goroutines): `qbench calibrate`
// uses it to tell, on a given machine, the generator's own latency floor and highest rate.
//
// It is also the smallest complete engine, the sketch ARCHITECTURE.md's "How to add an engine"
// points at.
//
// Designs: every design name the Redis and Kafka engines know is accepted, so that a scenario's
// shape can be replayed on the null engine unchanged. The design decides only who receives what:
// pubsub gives every consumer every message (one group per consumer), stream with nullq.groups N
// deals consumers to N groups round robin (as a Redis stream with redis.stream.groups N does),
// and every other design has one group of competing consumers. Nothing is ever redelivered (Ack
// is a no-op).
//
// Memory is bounded: each group's channel holds at most Capacity messages (the scenario's
// nullq: {capacity: N} changes it). When a group's channel is full, Send blocks until a consumer
// takes one or its context ends (backpressure, never a drop); blocked sends show as produce
// latency, and the backlog as lag.
package nullq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"qbench/engines"
)

// Capacity is the most messages one group's channel holds; memory is at most Capacity x
// message_size per group. It is large enough that a consumer briefly descheduled does not stall
// producers at the rates the generator reaches, small enough to stay well under 1 GiB at 1 KiB.
const Capacity = 1 << 16

// receiveMax is the most messages one Receive returns, as a stream's COUNT would.
const receiveMax = 100

// designs are accepted unchanged from the scenario; the first is the default.
var designs = []string{"stream", "list", "reliable-list", "pubsub", "topic"}

func init() {
	engines.Register(engines.Registration{
		Name:    "nullq",
		Designs: designs,
		Summary: "the null engine: a bounded channel inside qbench, no network or storage; measures the load generator itself (qbench calibrate)",
		New:     New,
		// Its own section, the smallest example of one: nullq: {capacity: 1000, groups: 2}.
		Options: "nullq",
		Decode:  decode,
		Check:   check,
		Groups:  groups,
	})
}

// Options are the engine's own section of the scenario, nullq:.
type Options struct {
	// Capacity is the most messages one group's channel holds.
	Capacity int `yaml:"capacity" json:"capacity"`
	// Groups is the stream design's number of receiving groups, consumers dealt to them round
	// robin (qbench calibrate sets it from the scenario it replays). 0 and 1: one.
	Groups int `yaml:"groups,omitempty" json:"groups,omitempty"`
}

// fieldError names the key at fault, so that scenario validation points at its line.
type fieldError struct{ field, msg string }

func (e fieldError) Error() string { return e.msg }
func (e fieldError) Field() string { return e.field }

// decode is the registration's Decode: the section over the defaults, checked.
func decode(section func(into any) error) (any, error) {
	o := Options{Capacity: Capacity}
	if err := section(&o); err != nil {
		return nil, err
	}
	if o.Capacity < 1 || o.Capacity > 1<<24 {
		return nil, fieldError{"capacity", fmt.Sprintf("must be 1 to %d messages (got %d)", 1<<24, o.Capacity)}
	}
	if o.Groups < 0 {
		return nil, fieldError{"groups", fmt.Sprintf("must be between 1 and the number of consumers (got %d)", o.Groups)}
	}
	return o, nil
}

// check is the registration's Check: groups are dealt consumers, so there are at most as many.
func check(options any, p engines.Plan) error {
	if o, ok := options.(Options); ok && p.Consumers > 0 && o.Groups > p.Consumers {
		return fieldError{"groups", fmt.Sprintf("must be between 1 and the number of consumers, %d (got %d)", p.Consumers, o.Groups)}
	}
	return nil
}

// groups is the registration's Groups, as New counts them.
func groups(options any, design string, consumers int) int {
	o, _ := options.(Options)
	return groupsOf(o, design, consumers)
}

func groupsOf(o Options, design string, consumers int) int {
	switch {
	case design == "pubsub":
		return max(consumers, 1)
	case design == "stream" && o.Groups > 1:
		return o.Groups
	}
	return 1
}

// Engine is one run's channels, one per receiving group.
type Engine struct {
	spec   engines.Spec
	groups []chan []byte
}

// New makes the engine for spec.
func New(_ context.Context, spec engines.Spec) (engines.Engine, error) {
	o := Options{Capacity: Capacity} // a spec built without a scenario: the defaults
	if spec.Options != nil {
		var ok bool
		if o, ok = spec.Options.(Options); !ok {
			return nil, errors.New("nullq: Spec.Options is not nullq.Options")
		}
	}
	e := &Engine{spec: spec, groups: make([]chan []byte, groupsOf(o, spec.Design, spec.Consumers))}
	for i := range e.groups {
		e.groups[i] = make(chan []byte, o.Capacity)
	}
	return e, nil
}

func (e *Engine) Setup(context.Context) error    { return nil }
func (e *Engine) Teardown(context.Context) error { return nil }
func (e *Engine) Close() error                   { return nil }

// InProcess says the engine runs inside qbench's process (engines.InProcess): its CPU is in the
// generator's getrusage figures.
func (e *Engine) InProcess() bool { return true }

// Groups is the number of receiving groups (engines.Grouper).
func (e *Engine) Groups() int { return len(e.groups) }

// GroupOf deals consumers to groups round robin, as the stream design does.
func (e *Engine) GroupOf(consumer int) int { return consumer % len(e.groups) }

// Lag is the messages waiting in the channels (engines.LagReporter); nothing is ever pending.
func (e *Engine) Lag(context.Context) (engines.Lag, error) {
	var l engines.Lag
	for _, g := range e.groups {
		l.Backlog += int64(len(g))
	}
	return l, nil
}

// Facts describe the engine for the result.
func (e *Engine) Facts(context.Context) engines.Facts {
	return engines.Facts{Name: "nullq", Design: e.spec.Design, Version: "in-process channel"}
}

func (e *Engine) NewProducer(context.Context, int) (engines.Producer, error) {
	return producer{e}, nil
}

func (e *Engine) NewConsumer(_ context.Context, id int) (engines.Consumer, error) {
	return &consumer{ch: e.groups[e.GroupOf(id)], idle: time.NewTimer(time.Hour)}, nil
}

type producer struct{ e *Engine }

// Send copies each payload (the runner reuses its buffers) into every group's channel, blocking
// while a channel is full. A payload not in every channel when ctx ends fails with ctx's error.
func (p producer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	for i, pl := range payloads {
		msg := append([]byte(nil), pl...)
		errs[i] = nil
		for _, g := range p.e.groups {
			select {
			case g <- msg:
			case <-ctx.Done():
				errs[i] = ctx.Err()
			}
			if errs[i] != nil {
				break
			}
		}
	}
}

func (producer) Close() error { return nil }

// consumer takes from its group's channel. Its idle timer is reused so that waiting costs no
// allocation: what the engine spends is charged to the generator's CPU figures.
type consumer struct {
	ch   chan []byte
	idle *time.Timer
}

// Receive takes what is in the channel, up to receiveMax; when it is empty it waits up to
// 100 ms for a first message.
func (c *consumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var first []byte
	select {
	case first = <-c.ch:
	default:
		c.idle.Reset(100 * time.Millisecond)
		select {
		case first = <-c.ch:
			c.idle.Stop()
		case <-c.idle.C:
			return nil, nil
		case <-ctx.Done():
			c.idle.Stop()
			return nil, ctx.Err()
		}
	}
	ds := append(make([]engines.Delivery, 0, min(receiveMax, 1+len(c.ch))), engines.Delivery{Payload: first})
	for len(ds) < receiveMax {
		select {
		case m := <-c.ch:
			ds = append(ds, engines.Delivery{Payload: m})
		default:
			return ds, nil
		}
	}
	return ds, nil
}

// Ack does nothing: a taken message is gone, as with a list.
func (*consumer) Ack(context.Context, []engines.Delivery) error { return nil }
func (c *consumer) Close() error                                { c.idle.Stop(); return nil }

// Sweep hands over what each group's channel still holds once consumers have stopped
// (engines.Sweeper): a backlog, not a loss. The run is over, so taking from the channel is
// reading what is left.
func (e *Engine) Sweep(ctx context.Context, found func(group int, payload []byte)) error {
	for g, ch := range e.groups {
	drain:
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case p := <-ch:
				found(g, p)
			default:
				break drain
			}
		}
	}
	return nil
}
