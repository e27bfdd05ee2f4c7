package redisq

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"qbench/engines"
)

// Options are the Redis engines' settings: the scenario's redis: section, decoded by every Redis
// registration (Decode: embedded, server, redis, redis-url, and the cluster's) and handed to the
// engine in engines.Spec.Options. Zero values mean the defaults Defaults fills in.
//
//	redis:
//	  stream: {ack: after, count: 100, block: 100ms, group_start: "0", groups: 1,
//	           maxlen: 0, exact_trim: false, claim_idle: 0s, max_deliveries: 0}
//	  list:   {push: lpush, count: 100, timeout: 100ms, visibility_timeout: 5s, max_deliveries: 0}
//	  pubsub: {pattern: false}
//	  wait:   {replicas: 0, aof_local: 0, aof: false, timeout: 0s, required: false}
type Options struct {
	Stream StreamOptions `yaml:"stream,omitempty" json:"stream,omitempty"`
	List   ListOptions   `yaml:"list,omitempty" json:"list,omitempty"`
	PubSub PubSubOptions `yaml:"pubsub,omitempty" json:"pubsub,omitempty"`
	Wait   WaitOptions   `yaml:"wait,omitempty" json:"wait,omitempty"`

	// written are the subsections the scenario wrote, for Check's "does not apply to design".
	written []string
}

// StreamOptions configure the stream design.
type StreamOptions struct {
	// MaxLen trims the stream to about this many entries on every XADD; 0 means no trimming.
	MaxLen int64 `yaml:"maxlen,omitempty" json:"maxlen,omitempty"`
	// ExactTrim uses MAXLEN = instead of MAXLEN ~.
	ExactTrim bool `yaml:"exact_trim,omitempty" json:"exact_trim,omitempty"`
	// Ack is "after" (XACK after the work), "before" (XACK before the work) or "noack".
	Ack string `yaml:"ack,omitempty" json:"ack,omitempty"`
	// Count is the XREADGROUP COUNT.
	Count int64 `yaml:"count,omitempty" json:"count,omitempty"`
	// Block is the XREADGROUP BLOCK time.
	Block time.Duration `yaml:"block,omitempty" json:"block,omitempty"`
	// GroupStart is the ID the consumer group starts at: "0" or "$".
	GroupStart string `yaml:"group_start,omitempty" json:"group_start,omitempty"`
	// Groups is the number of consumer groups on the stream (fan-out); consumers are dealt to
	// them round robin.
	Groups int `yaml:"groups,omitempty" json:"groups,omitempty"`
	// ClaimIdle makes each consumer claim entries pending for longer than this from other
	// consumers with XAUTOCLAIM (0 = no claiming).
	ClaimIdle time.Duration `yaml:"claim_idle,omitempty" json:"claim_idle,omitempty"`
	// MaxDeliveries moves an entry to the dead-letter stream (copy, then XACK) once it has been
	// delivered this many times. 0 means never.
	MaxDeliveries int64 `yaml:"max_deliveries,omitempty" json:"max_deliveries,omitempty"`
}

// ListOptions configure the list and reliable-list designs.
type ListOptions struct {
	// Push is lpush (consumers pop the right end) or rpush (consumers pop the left).
	Push string `yaml:"push,omitempty" json:"push,omitempty"`
	// Timeout is the blocking pop's timeout.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// VisibilityTimeout: the reliable-list reaper returns the elements of a consumer whose
	// heartbeat is older than this to the ready list.
	VisibilityTimeout time.Duration `yaml:"visibility_timeout,omitempty" json:"visibility_timeout,omitempty"`
	// MaxDeliveries moves a message to the dead-letter list once it has been delivered this many
	// times (reliable-list). 0 means never.
	MaxDeliveries int `yaml:"max_deliveries,omitempty" json:"max_deliveries,omitempty"`
	// Count is how many elements a consumer takes in one round trip (BLMPOP ... COUNT; the
	// reliable list moves up to this many).
	Count int `yaml:"count,omitempty" json:"count,omitempty"`
}

// PubSubOptions configure the pubsub design.
type PubSubOptions struct {
	// Pattern subscribes with PSUBSCRIBE to a pattern matching the channel.
	Pattern bool `yaml:"pattern,omitempty" json:"pattern,omitempty"`
}

// WaitOptions make producers wait, after each batch and on the same connection, until the batch
// is replicated (WAIT numreplicas timeout) or fsynced (WAITAOF numlocal numreplicas timeout).
type WaitOptions struct {
	// Replicas is WAIT's numreplicas (or WAITAOF's numreplicas).
	Replicas int `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	// AOFLocal is WAITAOF's numlocal (0 or 1); set, WAITAOF is used instead of WAIT.
	AOFLocal int `yaml:"aof_local,omitempty" json:"aof_local,omitempty"`
	// AOF uses WAITAOF even with AOFLocal 0: the batch waits for Replicas replicas to fsync it,
	// whatever the local server does.
	AOF bool `yaml:"aof,omitempty" json:"aof,omitempty"`
	// Timeout is the wait's timeout (0 waits forever, as Redis's 0 does).
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Required fails a batch whose wait fell short; otherwise it is only counted.
	Required bool `yaml:"required,omitempty" json:"required,omitempty"`
}

// Defaults for zero values, in one place.
const (
	DefaultStreamAck         = "after"
	DefaultStreamCount       = 100
	DefaultStreamBlock       = 100 * time.Millisecond
	DefaultGroupStart        = "0"
	DefaultListPush          = "lpush"
	DefaultListCount         = 100
	DefaultListTimeout       = 100 * time.Millisecond
	DefaultVisibilityTimeout = 5 * time.Second
)

// section is the key of the Redis engines' own section of a scenario.
const section = "redis"

// movedKeys are the top-level sections of older scenarios that now sit under redis:.
var movedKeys = []string{"stream", "list", "pubsub", "wait"}

// designsOf are the designs each subsection applies to; one written for another design would be
// silently ignored.
var designsOf = map[string][]string{"stream": {"stream"}, "list": {"list", "reliable-list"}, "pubsub": {"pubsub"}}

// Defaults fills o's zero values.
func (o Options) Defaults() Options {
	s, l := &o.Stream, &o.List
	if s.Ack == "" {
		s.Ack = DefaultStreamAck
	}
	if s.Count == 0 {
		s.Count = DefaultStreamCount
	}
	if s.Block == 0 {
		s.Block = DefaultStreamBlock
	}
	if s.GroupStart == "" {
		s.GroupStart = DefaultGroupStart
	}
	if s.Groups == 0 {
		s.Groups = 1
	}
	if l.Push == "" {
		l.Push = DefaultListPush
	}
	if l.Count == 0 {
		l.Count = DefaultListCount
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultListTimeout
	}
	if l.VisibilityTimeout == 0 {
		l.VisibilityTimeout = DefaultVisibilityTimeout
	}
	return o
}

// WithSection gives r what every Redis registration shares: the redis: section, its decoding
// and its checks, and the names: its designs take (the cluster's registrations use it too).
func WithSection(r engines.Registration) engines.Registration {
	r.Options, r.Decode, r.Check, r.Groups, r.Moved = section, Decode, Check, Groups, movedKeys
	r.Names, r.CheckNames = designNames, CheckNames
	return r
}

// Decode is the registrations' Decode: the redis: section over the defaults, checked whole.
func Decode(decode func(into any) error) (any, error) {
	var keys map[string]any
	if err := decode(&keys); err != nil {
		return nil, err
	}
	var o Options
	if err := decode(&o); err != nil {
		return nil, err
	}
	for _, k := range movedKeys {
		if _, ok := keys[k]; ok {
			o.written = append(o.written, k)
		}
	}
	o = o.Defaults()
	return o, o.check()
}

// fieldError is a bad value under redis:, naming its key for the scenario's file:line.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.msg }

// Field names the key within the section (scenario validation locates its line).
func (e *fieldError) Field() string { return e.field }

func bad(field, format string, args ...any) error {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// check checks the values alone (defaults filled): every bad key, each named.
func (o Options) check() error {
	var errs []error
	add := func(field, format string, args ...any) { errs = append(errs, bad(field, format, args...)) }
	s, l, w := o.Stream, o.List, o.Wait
	if l.Count < 0 || l.Count > 100000 {
		add("list.count", "must be between 1 and 100000 (got %d)", l.Count)
	}
	switch s.Ack {
	case "after", "before", "noack":
	default:
		add("stream.ack", "must be after, before or noack (got %q)", s.Ack)
	}
	if s.MaxLen < 0 {
		add("stream.maxlen", "must not be negative (got %d)", s.MaxLen)
	}
	if s.Count < 0 || s.Count > 100000 {
		add("stream.count", "must be between 1 and 100000 (got %d)", s.Count)
	}
	if s.Block < 0 {
		add("stream.block", "must not be negative (got %s)", s.Block)
	}
	if s.GroupStart != "0" && s.GroupStart != "$" {
		add("stream.group_start", "must be 0 or $ (got %q)", s.GroupStart)
	}
	if s.Groups < 0 {
		add("stream.groups", "must be between 1 and the number of consumers (got %d)", s.Groups)
	}
	if s.ClaimIdle < 0 {
		add("stream.claim_idle", "must not be negative (got %s)", s.ClaimIdle)
	}
	if s.MaxDeliveries < 0 {
		add("stream.max_deliveries", "must not be negative (got %d)", s.MaxDeliveries)
	}
	if w.Replicas < 0 {
		add("wait.replicas", "must not be negative (got %d)", w.Replicas)
	}
	if w.AOFLocal < 0 || w.AOFLocal > 1 {
		add("wait.aof_local", "must be 0 or 1 (got %d)", w.AOFLocal)
	}
	if w.AOF && w.Replicas == 0 && w.AOFLocal == 0 {
		add("wait.aof", "WAITAOF 0 0 waits for nothing: set redis.wait.replicas (replicas' fsync) or redis.wait.aof_local")
	}
	if w.Timeout < 0 {
		add("wait.timeout", "must not be negative (got %s)", w.Timeout)
	}
	if l.Push != "lpush" && l.Push != "rpush" {
		add("list.push", "must be lpush or rpush (got %q)", l.Push)
	}
	if l.Timeout < 0 {
		add("list.timeout", "must not be negative (got %s)", l.Timeout)
	}
	if l.VisibilityTimeout < 0 {
		add("list.visibility_timeout", "must not be negative (got %s)", l.VisibilityTimeout)
	}
	if l.MaxDeliveries < 0 {
		add("list.max_deliveries", "must not be negative (got %d)", l.MaxDeliveries)
	}
	return errors.Join(errs...)
}

// Check is the registrations' Check: the options against the design, the consumers and a named
// group.
func Check(options any, p engines.Plan) error {
	o, ok := options.(Options)
	if !ok {
		return fmt.Errorf("redis: options are a %T, not redisq.Options", options)
	}
	var errs []error
	if g := o.Stream.Groups; p.Consumers > 0 && g > p.Consumers {
		errs = append(errs, bad("stream.groups", "must be between 1 and the number of consumers, %d (got %d)", p.Consumers, g))
	}
	if p.Names[NameGroup] != "" && o.Stream.Groups > 1 {
		errs = append(errs, bad("stream.groups", "must be 1 with names.group (one named group; got %d)", o.Stream.Groups))
	}
	if !p.AnyDesign {
		for _, sec := range o.written {
			if ds, ok := designsOf[sec]; ok && !slices.Contains(ds, p.Design) {
				errs = append(errs, bad(sec, "does not apply to design %s (only to %s)", p.Design, strings.Join(ds, ", ")))
			}
		}
	}
	return errors.Join(errs...)
}

// Groups is the registrations' Groups: each pub/sub subscriber is a receiving group, a stream
// has stream.groups, a list one.
func Groups(options any, design string, consumers int) int {
	switch design {
	case "pubsub":
		return max(consumers, 1)
	case "stream":
		if o, ok := options.(Options); ok {
			return max(o.Stream.Groups, 1)
		}
	}
	return 1
}

// OptionsOf are spec's Redis options: the decoded section, or the defaults for a spec built
// without a scenario; zero fields are filled with the defaults.
func OptionsOf(spec engines.Spec) (Options, error) {
	switch v := spec.Options.(type) {
	case nil:
		return Options{}.Defaults(), nil
	case Options:
		return v.Defaults(), nil
	}
	return Options{}, fmt.Errorf("redis: Spec.Options is a %T, not redisq.Options", spec.Options)
}

// optionsOf is OptionsOf for a spec the engine has already accepted (newEngineWith checks it).
func optionsOf(spec engines.Spec) Options {
	o, _ := OptionsOf(spec)
	return o
}
