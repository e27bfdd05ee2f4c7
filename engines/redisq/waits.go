package redisq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// WaitTally queues a batch's WAIT or WAITAOF on its pipeline and counts the replies: the one
// implementation of the scenario's wait: for every Redis engine (one server or a cluster's
// per-shard pipelines).
type WaitTally struct {
	waits, short, errors atomic.Int64
}

// errWaitShort fails writes whose WAIT or WAITAOF fell short when the scenario requires it.
var errWaitShort = errors.New("WAIT/WAITAOF: fewer acknowledgements than required within the timeout")

// Queue adds WAITAOF numlocal numreplicas timeout (w.AOFLocal, or w.AOF) or WAIT numreplicas
// timeout to pipe, after the batch's writes and on the same connection, so that it covers exactly
// them; nil when the scenario waits for nothing.
func (*WaitTally) Queue(ctx context.Context, pipe redis.Pipeliner, w WaitOptions) *redis.Cmd {
	ms := strconv.FormatInt(w.Timeout.Milliseconds(), 10)
	switch {
	case w.AOFLocal > 0 || (w.Replicas > 0 && w.AOF):
		return pipe.Do(ctx, "WAITAOF", w.AOFLocal, w.Replicas, ms)
	case w.Replicas > 0:
		return pipe.Do(ctx, "WAIT", w.Replicas, ms)
	}
	return nil
}

// Note records a WAIT (an integer: replicas reached) or WAITAOF (an array: local fsyncs,
// replicas) reply, and fails the batch when it fell short and the scenario requires it.
func (t *WaitTally) Note(cmd *redis.Cmd, w WaitOptions, errs []error) {
	if cmd == nil {
		return
	}
	if err := cmd.Err(); err != nil {
		t.errors.Add(1)
		if w.Required {
			for i := range errs {
				if errs[i] == nil {
					errs[i] = fmt.Errorf("WAIT: %w", err)
				}
			}
		}
		return
	}
	short := false
	switch v := cmd.Val().(type) {
	case int64:
		short = v < int64(w.Replicas)
	case []any:
		if len(v) == 2 {
			local, _ := v[0].(int64)
			replicas, _ := v[1].(int64)
			short = local < int64(w.AOFLocal) || replicas < int64(w.Replicas)
		}
	}
	t.waits.Add(1)
	if !short {
		return
	}
	t.short.Add(1)
	if w.Required {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = errWaitShort
			}
		}
	}
}

// AddStats puts wait_batches, wait_short and wait_errors into stats when any wait ran.
func (t *WaitTally) AddStats(stats map[string]int64) {
	if t.waits.Load()+t.errors.Load() == 0 {
		return
	}
	stats["wait_batches"] = t.waits.Load()
	stats["wait_short"] = t.short.Load()
	stats["wait_errors"] = t.errors.Load()
}
