package natsq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"qbench/engines"
)

// Lag sums the groups' durable consumers: messages not yet delivered (num_pending) and delivered
// but not yet acknowledged (num_ack_pending). Core NATS holds nothing: no lag to read.
func (e *engine) Lag(ctx context.Context) (engines.Lag, error) {
	var lag engines.Lag
	if e.spec.Design == DesignCore {
		return lag, nil
	}
	for g := range e.Groups() {
		ci, err := e.consumerInfo(ctx, g)
		if err != nil {
			return engines.Lag{}, err
		}
		lag.Backlog += int64(ci.NumPending)
		lag.Pending += int64(ci.NumAckPending)
	}
	return lag, nil
}

func (e *engine) consumerInfo(ctx context.Context, group int) (*jetstream.ConsumerInfo, error) {
	c, err := e.js.Consumer(ctx, e.stream, e.durable(group))
	if err != nil {
		return nil, fmt.Errorf("%s: consumer %s: %w", e.name, e.durable(group), err)
	}
	return c.CachedInfo(), nil
}

// Sweep reads, without consuming, what the stream still holds for each group: every message
// after the group's acknowledgement floor (on a work queue that is every message left, since an
// acknowledged one is removed), one direct get per message. A stream the server says does not
// exist holds nothing: a power cut can leave it unrecoverable, and then its messages are gone.
// A group whose consumer is gone is read from the stream's first message; the ledger ignores
// what that group had already received.
func (e *engine) Sweep(ctx context.Context, found func(group int, payload []byte)) error {
	if e.spec.Design == DesignCore {
		return engines.ErrNothingStored
	}
	s, err := e.js.Stream(ctx, e.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	state := s.CachedInfo().State
	for g := range e.Groups() {
		from := state.FirstSeq
		ci, err := e.consumerInfo(ctx, g)
		switch {
		case errors.Is(err, jetstream.ErrConsumerNotFound):
		case err != nil:
			return err
		default:
			from = ci.AckFloor.Stream + 1
		}
		for seq := from; seq <= state.LastSeq; {
			m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(e.subject))
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: sweep at sequence %d: %w", e.name, seq, err)
			}
			found(g, m.Data)
			seq = m.Sequence + 1
		}
	}
	return nil
}

// Facts records what ran: the server's version, the stream's and consumers' settings as the
// server reports them, and the server's process when qbench started one node.
func (e *engine) Facts(ctx context.Context) engines.Facts {
	f := engines.Facts{Name: e.name, Design: e.spec.Design, Version: e.admin.ConnectedServerVersion(), Address: e.urls,
		Settings: map[string]string{
			"client":  "github.com/nats-io/nats.go",
			"subject": e.subject,
			"msg_id":  strconv.FormatBool(e.opts.MsgID),
		}, Stats: map[string]int64{}}
	if e.spec.Design != DesignCore {
		f.Settings["stream"] = e.stream
		if s, err := e.js.Stream(ctx, e.stream); err == nil {
			info := s.CachedInfo()
			f.Settings["storage"] = info.Config.Storage.String()
			f.Settings["retention"] = info.Config.Retention.String()
			f.Settings["replicas"] = strconv.Itoa(info.Config.Replicas)
			f.Settings["duplicate_window"] = info.Config.Duplicates.String()
			f.Stats["stream_messages"] = int64(info.State.Msgs)
			f.Stats["stream_bytes"] = int64(info.State.Bytes)
		} else {
			f.Settings["stream.error"] = err.Error()
		}
		var redelivered int64
		for g := range e.Groups() {
			if ci, err := e.consumerInfo(ctx, g); err == nil {
				redelivered += int64(ci.NumRedelivered)
				f.Settings["max_ack_pending"] = strconv.Itoa(ci.Config.MaxAckPending)
				f.Settings["ack_wait"] = ci.Config.AckWait.String()
			}
		}
		f.Stats["redelivered"] = redelivered
	}
	return f
}

// settingsOfNodes adds the managed nodes' facts: sync_interval, their count and start-up times,
// and the PID of a single node (for its CPU and memory over the run).
func settingsOfNodes(f *engines.Facts, m *managed) {
	si := m.opts.SyncInterval
	if si == "" {
		si = "default (2m)"
	}
	f.Settings["sync_interval"] = si
	f.Settings["servers"] = strconv.Itoa(len(m.cluster.Nodes))
	var started []string
	for _, n := range m.cluster.Nodes {
		started = append(started, n.StartedIn().String())
	}
	f.Settings["started_in"] = strings.Join(started, ",")
	if len(m.cluster.Nodes) == 1 {
		f.Settings["pid"] = strconv.Itoa(m.cluster.Nodes[0].PID())
	}
}
