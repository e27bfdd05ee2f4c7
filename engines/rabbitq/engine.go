// Package rabbitq is the RabbitMQ engine: classic, quorum and stream queues over AMQP 0.9.1,
// through github.com/rabbitmq/amqp091-go (the client RabbitMQ's own team maintains).
//
// Producers publish to the run's fanout exchange, bound to one queue per receiving group
// (`groups`); consumers share their group's queue (competing consumers) with manual
// acknowledgements and a prefetch. A stream queue is read by offset from its first message, so
// every consumer of a stream receives every message (each is a group of its own); AMQP 0.9.1
// reads a stream as well as the stream protocol's client for what qbench measures (delivery,
// acknowledgement credit, latency), so one client serves all three designs.
//
// Engine "rabbitmq" starts its own nodes (one, or nodes: 3 on loopback) and can stall, crash
// and restart them, raise their disk alarm, and cut their power with the message store on the
// power-loss file system;
// "rabbitmq-url" uses an existing broker at the scenario's address (amqp://user:pass@host:port/vhost).
package rabbitq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"qbench/engines"
	"qbench/engines/procs"
)

// The designs; the first is the default.
const (
	DesignClassic = "classic"
	DesignQuorum  = "quorum"
	DesignStream  = "stream"
)

// queuePromises are what the classic and quorum queues promise the conformance suite.
var queuePromises = []string{engines.PromiseExactlyOnceInOrder, engines.PromiseCompetingConsumers, engines.PromiseRedelivery}

func init() {
	engines.Register(engines.Registration{
		Name:      "rabbitmq",
		RunsAlone: true,
		Designs:   []string{DesignClassic, DesignQuorum, DesignStream},
		Summary:   "RabbitMQ classic, quorum or stream queue (amqp091-go) on nodes qbench starts (nodes: 1 or 3); needs Debian's rabbitmq-server",
		New:       newManaged,
		Faults:    []string{"stall", "server-crash", "power-loss", "disk-full", "command", "partition-leader-kill", "node-restart"},
		Options:   "rabbitmq", Decode: decodeFor(true), Check: checkPlan,
		Names: designNames, CheckNames: checkNames,
		Conformance: map[string]engines.Conformance{
			DesignClassic: {Promises: queuePromises},
			DesignQuorum:  {Promises: queuePromises},
		},
		Requires: func() error { _, err := procs.RabbitServerPath(); return err },
	})
	engines.Register(engines.Registration{
		Name:    "rabbitmq-url",
		Designs: []string{DesignClassic, DesignQuorum, DesignStream},
		Summary: "RabbitMQ classic, quorum or stream queue (amqp091-go) on an existing broker at address (amqp://user:pass@host:port/vhost)",
		New:     newURL,
		Shared:  true,
		Options: "rabbitmq", Decode: decodeFor(false), Check: checkPlan, NeedsAddress: true,
		Names: designNames, CheckNames: checkNames,
	})
}

// engine serves one run: an exchange and its queues.
type engine struct {
	name     string
	spec     engines.Spec
	opts     Options
	urls     []string
	exchange string
	queue    string // the queues' name prefix: queue.<group>; a named queue's whole name
	// named: the scenario names an existing queue (names.queue): it is the one queue, published
	// to through the default exchange with its name as routing key, and never deleted.
	named      bool
	routingKey string

	admin *amqp.Connection

	mu     sync.Mutex // guards admin
	opened engines.Closers

	// pending is what each consumer held unacknowledged when it last closed (PendingByConsumer).
	pending []atomic.Int64
	// published counts the messages the broker acknowledged (confirmed, or written without
	// confirms); swept, the messages the last sweep of a stream read (-1 before one).
	published, swept atomic.Int64
}

func newURL(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	opts, err := optionsOf(spec, false)
	if err != nil {
		return nil, err
	}
	var urls []string
	for _, u := range strings.Split(spec.Address, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		return nil, errors.New("rabbitmq-url: address (amqp://user:pass@host:port/vhost) is empty")
	}
	return newEngine("rabbitmq-url", spec, opts, urls)
}

func newEngine(name string, spec engines.Spec, opts Options, urls []string) (*engine, error) {
	e := &engine{name: name, spec: spec, opts: opts, urls: urls,
		exchange: "qbench." + spec.RunID, queue: "qbench." + spec.RunID,
		pending: make([]atomic.Int64, max(spec.Consumers, 0))}
	e.swept.Store(-1)
	if err := e.useNamedQueue(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	conn, err := e.dial(0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e.admin = conn
	return e, nil
}

// dial connects to node i of the broker's addresses (round robin), so a cluster's clients spread
// over its nodes and a client whose node died can try the next.
func (e *engine) dial(i int) (*amqp.Connection, error) {
	url := e.urls[i%len(e.urls)]
	return amqp.DialConfig(url, amqp.Config{Heartbeat: 10 * time.Second, Locale: "en_US",
		Dial: amqp.DefaultDial(5 * time.Second), Properties: amqp.Table{"connection_name": "qbench " + e.name}})
}

// Groups is the number of receiving groups: the queues bound to the exchange, or, for a stream,
// every consumer (each reads the whole stream).
func (e *engine) Groups() int {
	if e.spec.Design == DesignStream {
		return max(e.spec.Consumers, 1)
	}
	return e.opts.Groups
}

// GroupOf deals consumers to the queues round robin.
func (e *engine) GroupOf(consumer int) int { return consumer % e.Groups() }

// queueOf is the queue consumer or group g reads.
func (e *engine) queueOf(group int) string {
	if e.named {
		return e.queue
	}
	if e.spec.Design == DesignStream {
		return e.queue + ".0"
	}
	return e.queue + "." + strconv.Itoa(group)
}

// queues is how many queues the run declares.
func (e *engine) queues() int {
	if e.spec.Design == DesignStream || e.named {
		return 1
	}
	return e.opts.Groups
}

func (e *engine) queueArgs() amqp.Table {
	switch e.spec.Design {
	case DesignQuorum:
		return amqp.Table{"x-queue-type": "quorum", "x-quorum-initial-group-size": e.opts.Replicas}
	case DesignStream:
		args := amqp.Table{"x-queue-type": "stream", "x-initial-cluster-size": e.opts.Replicas}
		if e.opts.MaxLengthBytes > 0 {
			args["x-max-length-bytes"] = e.opts.MaxLengthBytes
		}
		if e.opts.MaxAge > 0 {
			args["x-max-age"] = e.opts.maxAgeArg()
		}
		if e.opts.MaxSegmentSizeBytes > 0 {
			args["x-stream-max-segment-size-bytes"] = e.opts.MaxSegmentSizeBytes
		}
		return args
	}
	return amqp.Table{"x-queue-type": "classic"}
}

// Setup declares the fanout exchange and its queues, durable: quorum queues and streams are
// always durable, and a classic queue that is not would lose even persistent messages on restart.
// A named queue is only made sure of (setupNamed).
func (e *engine) Setup(ctx context.Context) error {
	if e.named {
		return e.setupNamed()
	}
	ch, err := e.admin.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.ExchangeDeclare(e.exchange, amqp.ExchangeFanout, true, false, false, false, nil); err != nil {
		return fmt.Errorf("%s: declare exchange: %w", e.name, err)
	}
	for g := range e.queues() {
		q := e.queueOf(g)
		if _, err := ch.QueueDeclare(q, true, false, false, false, e.queueArgs()); err != nil {
			return fmt.Errorf("%s: declare queue %s: %w", e.name, q, err)
		}
		if err := ch.QueueBind(q, "", e.exchange, false, nil); err != nil {
			return fmt.Errorf("%s: bind queue %s: %w", e.name, q, err)
		}
	}
	return nil
}

// Teardown deletes the run's queues and exchange; a named queue stays as it is.
func (e *engine) Teardown(ctx context.Context) error {
	if e.named {
		return nil
	}
	conn := e.admin
	if conn.IsClosed() {
		var err error
		if conn, err = e.dial(0); err != nil {
			return err
		}
		defer conn.Close()
	}
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	var errs []error
	for g := range e.queues() {
		_, err := ch.QueueDelete(e.queueOf(g), false, false, false)
		errs = append(errs, err)
	}
	errs = append(errs, ch.ExchangeDelete(e.exchange, false, false))
	return errors.Join(errs...)
}

// Close closes every producer's and consumer's connection and the admin connection.
func (e *engine) Close() error {
	_, err := e.opened.CloseAll()
	if e.admin != nil && !e.admin.IsClosed() {
		err = errors.Join(err, e.admin.Close())
	}
	return err
}
