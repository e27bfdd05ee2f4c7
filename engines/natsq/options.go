package natsq

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Options are the engine's own section of a scenario, jetstream:, decoded by the registration.
//
//	jetstream:
//	  storage: file            # file or memory
//	  sync_interval: always    # managed servers only: "" (the server's default, 2m), always, or a duration
//	  servers: 3               # managed: nodes qbench starts (1 or 3)
//	  replicas: 3              # the stream's replicas (<= servers)
//	  msg_id: true             # Nats-Msg-Id on every publish, deduplicated within duplicate_window
//	  duplicate_window: 2m
//	  max_ack_pending: 1000    # the durable consumer's limit of unacknowledged deliveries
//	  ack_wait: 30s            # redelivery after this long unacknowledged
//	  ack_sync: false          # consumers wait for the server to confirm each acknowledgement
//	  groups: 1                # limits design: durable consumers, each owed every message
//	  fetch: 100               # messages a consumer buffers from the server
type Options struct {
	Storage         string        `yaml:"storage,omitempty" json:"storage,omitempty"`
	SyncInterval    string        `yaml:"sync_interval,omitempty" json:"sync_interval,omitempty"`
	Servers         int           `yaml:"servers,omitempty" json:"servers,omitempty"`
	Replicas        int           `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	MsgID           bool          `yaml:"msg_id,omitempty" json:"msg_id,omitempty"`
	DuplicateWindow time.Duration `yaml:"duplicate_window,omitempty" json:"duplicate_window,omitempty"`
	MaxAckPending   int           `yaml:"max_ack_pending,omitempty" json:"max_ack_pending,omitempty"`
	AckWait         time.Duration `yaml:"ack_wait,omitempty" json:"ack_wait,omitempty"`
	AckSync         bool          `yaml:"ack_sync,omitempty" json:"ack_sync,omitempty"`
	Groups          int           `yaml:"groups,omitempty" json:"groups,omitempty"`
	Fetch           int           `yaml:"fetch,omitempty" json:"fetch,omitempty"`
}

// DefaultOptions are a scenario's settings without a jetstream: section: one node, file
// storage at the server's own sync_interval, one replica, the server's consumer defaults.
func DefaultOptions() Options {
	return Options{Storage: "file", Servers: 1, Replicas: 1, Groups: 1, Fetch: 100}
}

// fieldError names the key at fault, so that scenario validation points at its line.
type fieldError struct{ field, msg string }

func (e fieldError) Error() string { return e.field + ": " + e.msg }
func (e fieldError) Field() string { return e.field }

// check validates o for a managed target (qbench starts the servers) or an existing one.
func (o Options) check(managed bool) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fieldError{field, fmt.Sprintf(format, args...)})
	}
	if o.Storage != "file" && o.Storage != "memory" {
		bad("storage", "must be file or memory (got %q)", o.Storage)
	}
	if o.SyncInterval != "" {
		switch {
		case !managed:
			bad("sync_interval", "is a server setting: only engine jetstream (servers qbench starts) can set it; set it in your server's configuration")
		case o.SyncInterval == "always":
		default:
			d, err := time.ParseDuration(o.SyncInterval)
			if err != nil || d <= 0 {
				bad("sync_interval", "must be always or a positive duration such as 1s or 2m (got %q)", o.SyncInterval)
			}
		}
	}
	if o.Servers != 1 && o.Servers != 3 {
		if !managed && o.Servers != 0 {
			bad("servers", "is the number of nodes qbench starts: only engine jetstream has it")
		} else if managed {
			bad("servers", "must be 1 or 3 (got %d)", o.Servers)
		}
	}
	if o.Replicas < 1 || o.Replicas > 5 {
		bad("replicas", "must be 1 to 5 (got %d)", o.Replicas)
	} else if managed && o.Replicas > o.Servers {
		bad("replicas", "%d replicas need at least %d servers (servers: %d)", o.Replicas, o.Replicas, o.Servers)
	}
	if o.DuplicateWindow < 0 {
		bad("duplicate_window", "must not be negative")
	}
	if o.MaxAckPending < 0 {
		bad("max_ack_pending", "must not be negative")
	}
	if o.AckWait < 0 {
		bad("ack_wait", "must not be negative")
	}
	if o.Groups < 1 || o.Groups > 64 {
		bad("groups", "must be 1 to 64 (got %d)", o.Groups)
	}
	if o.Fetch < 1 || o.Fetch > 10000 {
		bad("fetch", "must be 1 to 10000 messages (got %d)", o.Fetch)
	}
	return errors.Join(errs...)
}

// decodeFor is the registration's Decode: the section over the defaults, checked whole.
func decodeFor(managed bool) func(decode func(into any) error) (any, error) {
	return func(decode func(into any) error) (any, error) {
		o := DefaultOptions()
		if !managed {
			o.Servers = 0
		}
		if err := decode(&o); err != nil {
			return nil, err
		}
		o.SyncInterval = strings.TrimSpace(o.SyncInterval)
		if err := o.check(managed); err != nil {
			return nil, err
		}
		return o, nil
	}
}

// optionsOf are the spec's options: the decoded section, or the defaults for a spec built
// without a scenario.
func optionsOf(opts any, managed bool) (Options, error) {
	o := DefaultOptions()
	if !managed {
		o.Servers = 0
	}
	switch v := opts.(type) {
	case nil:
	case Options:
		o = v
	default:
		return o, fmt.Errorf("jetstream: Spec.Options is a %T, not jetstream.Options", opts)
	}
	return o, o.check(managed)
}
