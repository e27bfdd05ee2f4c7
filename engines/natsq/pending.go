package natsq

import (
	"context"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"qbench/engines"
)

// A JetStream durable consumer keeps its unacknowledged deliveries (num_ack_pending) for the
// durable as a whole, not per client: every qbench consumer of a group pulls from the same
// durable, so the server cannot say which of them holds what. The engine therefore keeps the
// record itself, as a stream group's PEL does on Redis: a message is held by the client it was
// last delivered to until an acknowledgement for it is sent. A redelivery after ack_wait moves
// it to the client that got it; a client that crashed keeps what it held until then. Summed
// over a group's clients it is the durable's num_ack_pending, less what the server redelivered
// and no client fetched yet.

// holdKey is a message in one group: a durable consumer's view of the stream's sequence.
type holdKey struct {
	group int
	seq   uint64
}

// holds records which client each delivered, unacknowledged message was last delivered to.
type holds struct {
	mu sync.Mutex
	by map[holdKey]int
}

// delivered records that consumer id received m (of group).
func (h *holds) delivered(group, id int, m jetstream.Msg) {
	meta, err := m.Metadata()
	if err != nil {
		return
	}
	h.mu.Lock()
	if h.by == nil {
		h.by = map[holdKey]int{}
	}
	h.by[holdKey{group, meta.Sequence.Stream}] = id
	h.mu.Unlock()
}

// acked drops m: the server removes it from the durable's pending on any client's
// acknowledgement, a late one from a client it was taken from included.
func (h *holds) acked(group int, m jetstream.Msg) {
	meta, err := m.Metadata()
	if err != nil {
		return
	}
	h.mu.Lock()
	delete(h.by, holdKey{group, meta.Sequence.Stream})
	h.mu.Unlock()
}

// counts is how many messages each of consumers clients holds.
func (h *holds) counts(consumers int) []int64 {
	out := make([]int64, consumers)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range h.by {
		if id >= 0 && id < consumers {
			out[id]++
		}
	}
	return out
}

// PendingByConsumer is each consumer's deliveries not yet acknowledged at the end
// (engines.PendingReporter), as the engine recorded them: see holds. Core NATS keeps nothing
// to acknowledge (ErrNothingStored).
func (e *engine) PendingByConsumer(_ context.Context, consumers int) ([]int64, error) {
	if e.spec.Design == DesignCore {
		return nil, engines.ErrNothingStored
	}
	return e.held.counts(consumers), nil
}
