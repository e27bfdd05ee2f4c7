// Package natsq is the NATS engine: JetStream streams read by durable pull consumers, and core
// NATS publish/subscribe, through github.com/nats-io/nats.go.
//
// Designs:
//   - workqueue: a stream with work-queue retention (a message leaves the stream once a consumer
//     acknowledges it) read by one durable pull consumer that every runner consumer shares
//     (competing consumers);
//   - limits: a stream with limits retention (messages stay until limits remove them) read by
//     `groups` durable pull consumers, each owed every message;
//   - core: core NATS publish/subscribe, at most once: every subscriber gets what is published
//     while it listens, nothing is stored. A publish counts as acknowledged once a flush round trip
//     shows the server has read it.
//
// Engine "jetstream" starts its own nats-server (one node, or servers: 3 on loopback) and can
// stall (SIGSTOP), crash (SIGKILL) and restart it, and cut its power when its store is on the
// power-loss file system; "jetstream-url" uses an existing server at the scenario's address.
package natsq

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"qbench/engines"
	"qbench/engines/procs"
)

// The designs; the first is the default.
const (
	DesignWorkQueue = "workqueue"
	DesignLimits    = "limits"
	DesignCore      = "core"
)

var designs = []string{DesignWorkQueue, DesignLimits, DesignCore}

func init() {
	engines.Register(engines.Registration{
		Name:    "jetstream",
		Designs: designs,
		Summary: "NATS JetStream stream + durable pull consumer, or core pub/sub, on nats-server qbench starts (servers: 1 or 3)",
		New:     newManaged,
		Faults:  []string{"stall", "server-crash", "power-loss", "disk-full", "partition-leader-kill", "node-restart"},
		Options: "jetstream", Decode: decodeFor(true),
		Conformance: map[string]engines.Conformance{
			DesignWorkQueue: {
				Promises: []string{engines.PromiseExactlyOnceInOrder, engines.PromiseCompetingConsumers, engines.PromiseRedelivery},
				// JetStream redelivers an unacknowledged message after ack_wait (30 s by default).
				Scenario: map[string]string{engines.PromiseRedelivery: "jetstream:\n  ack_wait: 500ms\n"},
			},
			DesignCore: {Promises: []string{engines.PromiseExactlyOnceInOrder, engines.PromiseCompetingConsumers,
				engines.PromiseFanOut, engines.PromiseOfflineSubscriberMisses}},
		},
		Requires: func() error { _, err := procs.NATSServerPath(); return err },
	})
	engines.Register(engines.Registration{
		Name:    "jetstream-url",
		Designs: designs,
		Summary: "NATS JetStream stream + durable pull consumer, or core pub/sub, on an existing server at address (nats://host:port,...)",
		New:     newURL,
		Shared:  true,
		Options: "jetstream", Decode: decodeFor(false), NeedsAddress: true,
	})
}

// engine serves one run on one stream (or subject, for core).
type engine struct {
	name    string
	spec    engines.Spec
	opts    Options
	urls    string // comma-separated, as nats.Connect takes them
	stream  string
	subject string

	admin *nats.Conn // Setup, Teardown, lag, sweep, facts
	js    jetstream.JetStream

	opened engines.Closers
	held   holds       // what each consumer was delivered and has not acknowledged
	health healthState // what Health counts across readings
}

func newURL(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	opts, err := optionsOf(spec.Options, false)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(spec.Address) == "" {
		return nil, errors.New("jetstream-url: address (nats://host:port[,...]) is empty")
	}
	return newEngine("jetstream-url", spec, opts, spec.Address)
}

func newEngine(name string, spec engines.Spec, opts Options, urls string) (*engine, error) {
	if len(spec.Names) > 0 {
		return nil, fmt.Errorf("%s: named queues (produce-only and consume-only runs) are not supported yet", name)
	}
	e := &engine{name: name, spec: spec, opts: opts, urls: urls}
	id := sanitize(spec.RunID)
	e.stream, e.subject = "QBENCH_"+id, "qbench."+id
	nc, err := e.connect("qbench-admin")
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, urls, err)
	}
	e.admin = nc
	if e.js, err = jetstream.New(nc); err != nil {
		nc.Close()
		return nil, err
	}
	return e, nil
}

// sanitize keeps a run ID's letters, digits, - and _: a stream name may hold no '.', '*', '>'
// or space, and a subject token no '.'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "run"
	}
	return b.String()
}

// connect opens a connection that keeps reconnecting (a server restarted by a fault comes back
// on its port) and buffers publishes meanwhile, which fail at their acknowledgement if lost.
func (e *engine) connect(name string) (*nats.Conn, error) {
	return nats.Connect(e.urls, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.Timeout(5*time.Second), nats.RetryOnFailedConnect(false))
}

// groups is how many receiving groups the design has (Grouper).
func (e *engine) Groups() int {
	switch e.spec.Design {
	case DesignCore:
		return max(e.spec.Consumers, 1)
	case DesignLimits:
		return e.opts.Groups
	}
	return 1
}

// GroupOf deals consumers to groups round robin; each core subscriber is a group of its own.
func (e *engine) GroupOf(consumer int) int { return consumer % e.Groups() }

func (e *engine) durable(group int) string { return "qbench-" + strconv.Itoa(group) }

// Setup creates the stream and its durable consumers (nothing for core).
func (e *engine) Setup(ctx context.Context) error {
	if e.spec.Design == DesignCore {
		return nil
	}
	cfg := jetstream.StreamConfig{
		Name: e.stream, Subjects: []string{e.subject}, Storage: jetstream.FileStorage,
		Replicas: e.opts.Replicas, Duplicates: e.opts.DuplicateWindow, AllowDirect: true,
	}
	if e.opts.Storage == "memory" {
		cfg.Storage = jetstream.MemoryStorage
	}
	if e.spec.Design == DesignWorkQueue {
		cfg.Retention = jetstream.WorkQueuePolicy
	}
	s, err := e.js.CreateStream(ctx, cfg)
	if err != nil {
		return fmt.Errorf("%s: create stream %s: %w", e.name, e.stream, err)
	}
	for g := range e.Groups() {
		cc := jetstream.ConsumerConfig{Durable: e.durable(g), AckPolicy: jetstream.AckExplicitPolicy,
			MaxAckPending: e.opts.MaxAckPending, AckWait: e.opts.AckWait, DeliverPolicy: jetstream.DeliverAllPolicy}
		if _, err := s.CreateConsumer(ctx, cc); err != nil {
			return fmt.Errorf("%s: create consumer %s: %w", e.name, cc.Durable, err)
		}
	}
	return nil
}

// Teardown deletes the run's stream (and with it its consumers).
func (e *engine) Teardown(ctx context.Context) error {
	if e.spec.Design == DesignCore {
		return nil
	}
	err := e.js.DeleteStream(ctx, e.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	return err
}

// Close closes every producer's and consumer's connection and the admin connection.
func (e *engine) Close() error {
	_, err := e.opened.CloseAll()
	if e.admin != nil {
		e.admin.Close()
	}
	return err
}

// msgID is a message's Nats-Msg-Id: the stamp's producer, run tag and sequence number (bytes
// 4 to 24 of every qbench payload), unique per message and the same on a resend.
func msgID(payload []byte) string {
	if len(payload) < 24 {
		return hex.EncodeToString(payload)
	}
	return hex.EncodeToString(payload[4:24])
}

// closer adapts a nats.Conn to Close() error.
type closer struct{ nc *nats.Conn }

func (c closer) Close() error { c.nc.Close(); return nil }
