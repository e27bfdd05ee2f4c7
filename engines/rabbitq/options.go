package rabbitq

import (
	"errors"
	"fmt"
	"time"

	"qbench/engines"
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
//	  max_length_bytes: 0   # stream: retention by size (x-max-length-bytes), 0 keeps everything
//	  max_age: 0s           # stream: retention by age (x-max-age), whole seconds, 0 keeps everything
//	  max_segment_size_bytes: 0  # stream: segment size (x-stream-max-segment-size-bytes), 0: the broker's 500 MB
type Options struct {
	Nodes      int   `yaml:"nodes,omitempty" json:"nodes,omitempty"`
	Persistent *bool `yaml:"persistent,omitempty" json:"persistent,omitempty"`
	Confirms   *bool `yaml:"confirms,omitempty" json:"confirms,omitempty"`
	Prefetch   int   `yaml:"prefetch,omitempty" json:"prefetch,omitempty"`
	Replicas   int   `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	Groups     int   `yaml:"groups,omitempty" json:"groups,omitempty"`
	// The stream's retention. RabbitMQ applies it a whole segment at a time, when a segment fills:
	// the oldest segments go once the stream is over max_length_bytes or their messages are older
	// than max_age, read or not.
	MaxLengthBytes      int64         `yaml:"max_length_bytes,omitempty" json:"max_length_bytes,omitempty"`
	MaxAge              time.Duration `yaml:"max_age,omitempty" json:"max_age,omitempty"`
	MaxSegmentSizeBytes int64         `yaml:"max_segment_size_bytes,omitempty" json:"max_segment_size_bytes,omitempty"`
}

// maxSegmentSize is the largest segment RabbitMQ accepts (3 GB).
const maxSegmentSize = 3_000_000_000

// retains reports whether the options set any of the stream's retention.
func (o Options) retains() bool {
	return o.MaxLengthBytes != 0 || o.MaxAge != 0 || o.MaxSegmentSizeBytes != 0
}

// checkDesign refuses the stream's retention on a queue design: the registrations' Check, so
// validation names the file and line; the engine checks again when it is made from a spec
// built without a scenario.
func (o Options) checkDesign(design string) error {
	if design == DesignStream || !o.retains() {
		return nil
	}
	var errs []error
	for _, f := range []struct {
		field string
		set   bool
	}{{"max_length_bytes", o.MaxLengthBytes != 0}, {"max_age", o.MaxAge != 0}, {"max_segment_size_bytes", o.MaxSegmentSizeBytes != 0}} {
		if f.set {
			errs = append(errs, fieldError{f.field, fmt.Sprintf("is the stream design's retention: design %s has none", design)})
		}
	}
	return errors.Join(errs...)
}

// checkPlan is the registrations' Check: the section against the scenario's design and a named
// queue (one queue: one group).
func checkPlan(options any, p engines.Plan) error {
	o, ok := options.(Options)
	if !ok {
		return nil
	}
	var errs []error
	if p.Names[NameQueue] != "" && o.Groups > 1 {
		errs = append(errs, fieldError{"groups", fmt.Sprintf("must be 1 with names.queue (one named queue; got %d)", o.Groups)})
	}
	if !p.AnyDesign {
		errs = append(errs, o.checkDesign(p.Design))
	}
	return errors.Join(errs...)
}

// maxAgeArg is max_age as x-max-age writes it: whole seconds, in the largest unit that divides
// them (RabbitMQ's units are Y, M, D, h, m and s).
func (o Options) maxAgeArg() string {
	s := int64(o.MaxAge / time.Second)
	switch {
	case s%86400 == 0:
		return fmt.Sprintf("%dD", s/86400)
	case s%3600 == 0:
		return fmt.Sprintf("%dh", s/3600)
	case s%60 == 0:
		return fmt.Sprintf("%dm", s/60)
	}
	return fmt.Sprintf("%ds", s)
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
	if o.MaxLengthBytes < 0 {
		bad("max_length_bytes", "must not be negative (got %d)", o.MaxLengthBytes)
	}
	if o.MaxAge < 0 || o.MaxAge%time.Second != 0 {
		bad("max_age", "must be whole seconds, 1s or more, or 0 for no limit (got %s)", o.MaxAge)
	}
	if o.MaxSegmentSizeBytes < 0 || o.MaxSegmentSizeBytes > maxSegmentSize {
		bad("max_segment_size_bytes", "must be 0 (the broker's default) to %d (got %d)", int64(maxSegmentSize), o.MaxSegmentSizeBytes)
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

// optionsOf is the engine's options from a spec: Spec.Options, or the defaults without one.
func optionsOf(spec engines.Spec, managed bool) (Options, error) {
	opts := spec.Options
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
	if err := o.check(managed); err != nil {
		return o, err
	}
	return o, o.checkDesign(spec.Design)
}
