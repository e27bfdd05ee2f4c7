// Package engines is the seam between the engine-neutral runner (package bench) and the systems
// under test. An Engine owns one queue for one run: it sets it up, opens producers and consumers
// on it, and tears it down. Payloads are opaque bytes to an engine; the runner stamps and reads them.
//
// Optional capabilities (engine-side lag, faults, facts for the result, the final sweep of what
// is left) are discovered by interface assertion, so a design that lacks one needs no special
// case in the runner. They are all declared in capabilities.go, and every type that claims one
// says so with a compile-time check (var _ engines.X = (*T)(nil)): a renamed method then fails
// the build instead of silently switching the capability off (TestEveryCapabilityIsChecked).
package engines

import "context"

// Engine is one system under test, prepared for one run.
type Engine interface {
	// Setup creates the queue (stream and group, lists, topic) under names derived from Spec.RunID.
	Setup(ctx context.Context) error
	// NewProducer opens producer number id (0-based).
	NewProducer(ctx context.Context, id int) (Producer, error)
	// NewConsumer opens consumer number id (0-based). A consumer that must be listening before
	// the first message is published (pub/sub) is listening when NewConsumer returns.
	NewConsumer(ctx context.Context, id int) (Consumer, error)
	// Teardown removes what Setup created. It is called even after a failed or interrupted run.
	Teardown(ctx context.Context) error
	// Close releases connections and stops anything the engine started (servers, brokers).
	Close() error
}

// Producer sends messages. Send may be called concurrently by up to Spec.InFlight goroutines of
// the runner (one producer keeps its schedule while earlier batches are in flight); Close is
// called once no Send is running. Batches sent concurrently may reach the engine in any order:
// the runner only holds the engine to the order of a batch's own payloads and of batches sent
// after another was acknowledged.
type Producer interface {
	// Send sends a batch of payloads as one round trip where the design allows it (pipelining,
	// batching), and returns once every payload is answered. On return errs[i] is nil when payload
	// i was acknowledged by the engine, or the reason it was not. len(errs) == len(payloads).
	// Send must not retain payloads or errs after returning; concurrent calls never share them.
	Send(ctx context.Context, payloads [][]byte, errs []error)
	Close() error
}

// Consumer receives messages. It is used by one goroutine.
type Consumer interface {
	// Receive waits a short, engine-chosen time (at most about 100 ms) for messages and returns
	// what arrived, possibly nothing. It returns ctx.Err() once ctx is done.
	Receive(ctx context.Context) ([]Delivery, error)
	// Ack acknowledges deliveries after the runner has done the scenario's work on them. Designs
	// without acknowledgements (list, pub/sub) return nil.
	Ack(ctx context.Context, ds []Delivery) error
	Close() error
}

// Delivery is one received message.
type Delivery struct {
	// Payload is valid until the consumer's next Receive: consumers may slice it from a reply
	// buffer they reuse, so the runner reads the stamp at once and keeps nothing of it.
	Payload []byte
	// Handle identifies the delivery to the engine for Ack (a stream entry ID, a list element, an
	// offset). The runner never interprets it. Like Payload (and the slice Receive returns) it
	// is valid until the consumer's next Receive: the runner acknowledges before it receives again.
	Handle any
	// Shard is the shard the message was read from (a Kafka partition, a Redis Cluster shard),
	// set by the consumers of a DeliverySharder; 0 otherwise.
	Shard int
}
