package natsq

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"qbench/engines"
)

// healthState carries what Health counts across readings: the stream's leader changes (the
// server reports who leads now, not how often that changed).
type healthState struct {
	mu      sync.Mutex
	leader  string
	changes int64
}

// Health reads JetStream's own view (engines.HealthReporter), sampled once a second:
//   - the account's JetStream usage and limits: memory_bytes and store_bytes used, max_memory
//     and max_store (-1: unlimited), streams, consumers, and the JetStream API's calls and
//     errors (api_total, api_errors: a publish refused for a full store is not an API call,
//     a failed stream info is);
//   - the run's stream: stream_msgs, stream_bytes, stream_deleted (interior deletes), and on a
//     replicated stream its leader (status stream_leader), replicas_current, replicas_offline,
//     replicas_lag_max and stream_leader_changes counted across readings.
//
// A part that does not answer becomes a status (jetstream or stream: the error) instead of
// failing the reading, so a stalled or leaderless server shows as such beside the latency it
// causes. Core NATS has no JetStream state: only the account's part is read.
func (e *engine) Health(ctx context.Context) (engines.Health, error) {
	if _, ok := ctx.Deadline(); !ok {
		// A JetStream API request goes unanswered while a cluster elects its meta leader.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
	}
	h := engines.Health{Counters: map[string]int64{}, Status: map[string]string{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ai, err := e.js.AccountInfo(ctx)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			h.Status["jetstream"] = shortErr(err)
			return
		}
		h.Status["jetstream"] = "ok"
		c := h.Counters
		c["memory_bytes"], c["store_bytes"] = int64(ai.Memory), int64(ai.Store)
		c["max_memory"], c["max_store"] = ai.Limits.MaxMemory, ai.Limits.MaxStore
		c["streams"], c["consumers"] = int64(ai.Streams), int64(ai.Consumers)
		c["api_total"], c["api_errors"] = int64(ai.API.Total), int64(ai.API.Errors)
	}()
	if e.spec.Design != DesignCore {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := e.js.Stream(ctx, e.stream)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				h.Status["stream"] = shortErr(err)
				return
			}
			h.Status["stream"] = "ok"
			e.streamHealth(s.CachedInfo(), h.Counters, h.Status)
		}()
	}
	wg.Wait()
	return h, nil
}

// streamHealth fills the stream's counters and, when replicated, its cluster's.
func (e *engine) streamHealth(info *jetstream.StreamInfo, c map[string]int64, st map[string]string) {
	c["stream_msgs"], c["stream_bytes"] = int64(info.State.Msgs), int64(info.State.Bytes)
	c["stream_deleted"] = int64(info.State.NumDeleted)
	if info.Config.Replicas < 2 || info.Cluster == nil {
		return
	}
	leader := info.Cluster.Leader
	if leader == "" {
		leader = "none"
	}
	st["stream_leader"] = leader
	c["replicas_current"], c["replicas_offline"], c["replicas_lag_max"] = 0, 0, 0
	for _, p := range info.Cluster.Replicas {
		switch {
		case p.Offline:
			c["replicas_offline"]++
		case p.Current:
			c["replicas_current"]++
		}
		c["replicas_lag_max"] = max(c["replicas_lag_max"], int64(p.Lag))
	}
	e.health.mu.Lock()
	if e.health.leader != "" && e.health.leader != leader {
		e.health.changes++
	}
	e.health.leader = leader
	c["stream_leader_changes"] = e.health.changes
	e.health.mu.Unlock()
}

// Health adds each managed node's /healthz (status healthz.n1 ...: ok, down, or the server's
// reason, such as a stream that is not current) to the engine's reading.
func (m *managed) Health(ctx context.Context) (engines.Health, error) {
	var (
		wg    sync.WaitGroup
		nodes = make([]string, len(m.cluster.Nodes))
	)
	for i, n := range m.cluster.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch err := n.Healthz(ctx); {
			case errors.Is(err, syscall.ECONNREFUSED):
				nodes[i] = "down"
			case err != nil:
				nodes[i] = shortErr(err)
			default:
				nodes[i] = "ok"
			}
		}()
	}
	h, err := m.engine.Health(ctx)
	wg.Wait()
	for i, n := range m.cluster.Nodes {
		h.Status["healthz."+n.Name()] = nodes[i]
	}
	return h, err
}

// shortErr is an error as a status value: its first line, at most 120 bytes, so that a status
// takes few distinct values over a run.
func shortErr(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
