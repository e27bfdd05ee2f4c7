package rabbitq

import (
	"errors"
	"fmt"
)

// Options are the engine's own section of a scenario, rabbitmq:, decoded by the registration.
//
//	rabbitmq:
//	  nodes: 3              # managed: RabbitMQ nodes qbench starts on loopback (1 or 3)
//	  persistent: true      # delivery mode 2: the broker writes the message to disk
//	  confirms: true        # publisher confirms: a publish counts once the broker confirms it
//	  prefetch: 100         # basic.qos: unacknowledged deliveries per consumer
//	  replicas: 3           # quorum and stream queues: initial group size (<= nodes)
//	  groups: 1             # queues bound to the run's fanout exchange, each owed every message
type Options struct {
	Nodes      int   `yaml:"nodes,omitempty" json:"nodes,omitempty"`
	Persistent *bool `yaml:"persistent,omitempty" json:"persistent,omitempty"`
	Confirms   *bool `yaml:"confirms,omitempty" json:"confirms,omitempty"`
	Prefetch   int   `yaml:"prefetch,omitempty" json:"prefetch,omitempty"`
	Replicas   int   `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	Groups     int   `yaml:"groups,omitempty" json:"groups,omitempty"`
}

// DefaultOptions are a scenario's settings without a rabbitmq: section: one node, persistent
// messages published with confirms, prefetch 100, one queue.
func DefaultOptions() Options {
	t := true
	return Options{Nodes: 1, Persistent: &t, Confirms: &t, Prefetch: 100, Replicas: 1, Groups: 1}
}

type fieldError struct{ field, msg string }

func (e fieldError) Error() string { return e.field + ": " + e.msg }
func (e fieldError) Field() string { return e.field }

// fill completes a decoded section with the defaults of the keys it left out.
func (o Options) fill() Options {
	d := DefaultOptions()
	if o.Persistent == nil {
		o.Persistent = d.Persistent
	}
	if o.Confirms == nil {
		o.Confirms = d.Confirms
	}
	return o
}

func (o Options) check(managed bool) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fieldError{field, fmt.Sprintf(format, args...)})
	}
	switch {
	case !managed && o.Nodes != 0:
		bad("nodes", "is the number of nodes qbench starts: only engine rabbitmq has it")
	case managed && o.Nodes != 1 && o.Nodes != 3:
		bad("nodes", "must be 1 or 3 (got %d)", o.Nodes)
	}
	if o.Prefetch < 1 || o.Prefetch > 65535 {
		bad("prefetch", "must be 1 to 65535 (got %d)", o.Prefetch)
	}
	if o.Replicas < 1 || o.Replicas > 7 {
		bad("replicas", "must be 1 to 7 (got %d)", o.Replicas)
	} else if managed && o.Replicas > o.Nodes {
		bad("replicas", "%d replicas need at least %d nodes (nodes: %d)", o.Replicas, o.Replicas, o.Nodes)
	}
	if o.Groups < 1 || o.Groups > 64 {
		bad("groups", "must be 1 to 64 (got %d)", o.Groups)
	}
	return errors.Join(errs...)
}

func decodeFor(managed bool) func(decode func(into any) error) (any, error) {
	return func(decode func(into any) error) (any, error) {
		o := DefaultOptions()
		if !managed {
			o.Nodes = 0
		}
		if err := decode(&o); err != nil {
			return nil, err
		}
		o = o.fill()
		if err := o.check(managed); err != nil {
			return nil, err
		}
		return o, nil
	}
}

func optionsOf(opts any, managed bool) (Options, error) {
	o := DefaultOptions()
	if !managed {
		o.Nodes = 0
	}
	switch v := opts.(type) {
	case nil:
	case Options:
		o = v.fill()
	default:
		return o, fmt.Errorf("rabbitmq: Spec.Options is a %T, not rabbitq.Options", opts)
	}
	return o, o.check(managed)
}
