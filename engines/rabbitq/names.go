package rabbitq

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"qbench/engines"
)

// NameQueue is the key of a scenario's names: every design takes: an existing queue (classic,
// quorum or stream, as the design says) that producers publish to through the default exchange
// and consumers read, for produce-only and consume-only runs.
const NameQueue = "queue"

// designNames are the names each design takes (the registrations' Names).
var designNames = map[string][]string{
	DesignClassic: {NameQueue},
	DesignQuorum:  {NameQueue},
	DesignStream:  {NameQueue},
}

// maxQueueName is the longest queue name AMQP 0.9.1 carries (a shortstr: 255 bytes).
const maxQueueName = 255

// checkNames is the registrations' CheckNames: a queue name by RabbitMQ's rules.
func checkNames(p engines.Plan) error {
	return checkQueueName(p.Names[NameQueue])
}

func checkQueueName(q string) error {
	switch {
	case q == "":
		return nil
	case len(q) > maxQueueName:
		return fieldError{NameQueue, fmt.Sprintf("must be at most %d bytes of UTF-8 (got %d bytes)", maxQueueName, len(q))}
	case !utf8.ValidString(q):
		return fieldError{NameQueue, fmt.Sprintf("must be UTF-8 (got %q)", q)}
	case strings.HasPrefix(q, "amq."):
		return fieldError{NameQueue, fmt.Sprintf("must not start with amq., which RabbitMQ reserves for its own queues (got %q)", q)}
	}
	return nil
}

// useNamedQueue points e at the scenario's named queue, if any: one queue, published to through
// the default exchange (routing key: the queue's name), so that the run declares no exchange and
// binds nothing on the existing broker, and its tear-down deletes nothing.
func (e *engine) useNamedQueue() error {
	q := e.spec.Names[NameQueue]
	if q == "" {
		return nil
	}
	if err := checkQueueName(q); err != nil {
		return fmt.Errorf("names.%w", err)
	}
	if e.opts.Groups > 1 {
		return fmt.Errorf("groups: must be 1 with names.queue (one named queue; got %d)", e.opts.Groups)
	}
	e.named, e.exchange, e.routingKey, e.queue = true, "", q, q
	return nil
}

// setupNamed makes sure the named queue exists: a passive declare (which neither changes nor
// checks the existing queue's arguments), and only when the queue is missing a declaration with
// the design's arguments. A queue of another type than the design is the scenario's mistake;
// the broker then refuses the consumers' reads.
func (e *engine) setupNamed() error {
	ch, err := e.adminChannel()
	if err != nil {
		return err
	}
	_, err = ch.QueueDeclarePassive(e.queue, true, false, false, false, nil)
	ch.Close()
	var ae *amqp.Error
	if err == nil || !errors.As(err, &ae) || ae.Code != amqp.NotFound {
		return err
	}
	// The failed passive declare closed its channel: declare on a new one.
	if ch, err = e.adminChannel(); err != nil {
		return err
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare(e.queue, true, false, false, false, e.queueArgs()); err != nil {
		return fmt.Errorf("%s: declare queue %s: %w", e.name, e.queue, err)
	}
	return nil
}
