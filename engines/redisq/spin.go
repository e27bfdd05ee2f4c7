package redisq

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// Busy polling, off unless QBENCH_REDIS_SPIN sets a bound: the first read of a reply spins on
// the socket for a short, bounded time before parking on Go's network poller, so that a reader
// still running when the reply lands takes it without a wake-up. Measured at the latency floor
// on a 2-vCPU VM it made produce p50 worse, not better (the spinning vCPU is the one the server
// needs; scenarios/library/generator/README.md, the floor), so it is an experiment to
// repeat on machines with spare cores. The spin is bounded so that it costs little CPU and
// never competes with a busy engine for the cores (see spinner.budget).

const (
	// spinEnv sets the longest spin (a Go duration; unset or 0: no busy polling).
	spinEnv = "QBENCH_REDIS_SPIN"
	// defaultMaxSpin is the longest spin when QBENCH_REDIS_SPIN is unset.
	defaultMaxSpin = 0
	// spinRTTs bounds a spin to this many times the measured round trip.
	spinRTTs = 3
	// spinShare bounds a spin to 1/spinShare of the connection's idle time before its request:
	// a connection spins at most about 1/spinShare of the time, and one whose requests follow
	// each other closely (a closed loop, a busy consumer) does not spin at all.
	spinShare = 8
	// initialRTT is the round trip assumed until one is measured.
	initialRTT = 50 * time.Microsecond
)

// spinning is how many connections are spinning now, process-wide: at most one at a time, so
// spinning takes at most one core's share from the engine and the rest of qbench.
var spinning atomic.Int32

// spinner is an engine's busy-polling policy and its counts.
type spinner struct {
	max time.Duration // 0: never spin
	// rttNs is a moving average of the round trip (request written to first reply byte read).
	rttNs atomic.Int64
	// hits are spins that found the reply, misses those that gave up and parked, spunNs the
	// time spent spinning.
	hits, misses, spunNs atomic.Int64
}

// newSpinner reads the longest spin from QBENCH_REDIS_SPIN (default none).
func newSpinner() (*spinner, error) {
	s := &spinner{max: defaultMaxSpin}
	if v := os.Getenv(spinEnv); v != "" {
		d, err := time.ParseDuration(v)
		if v == "0" {
			d, err = 0, nil
		}
		if err != nil || d < 0 || d > time.Millisecond {
			return nil, fmt.Errorf("%s=%q: want a duration from 0 to 1ms", spinEnv, v)
		}
		s.max = d
	}
	s.rttNs.Store(int64(initialRTT))
	return s, nil
}

// budget is how long the first read of a reply may spin, given how long the connection was
// idle before its request: the least of the longest spin, spinRTTs round trips and 1/spinShare
// of the idle time. 0: do not spin.
func (s *spinner) budget(idle time.Duration) time.Duration {
	if s == nil || s.max <= 0 {
		return 0
	}
	return max(min(s.max, spinRTTs*time.Duration(s.rttNs.Load()), idle/spinShare), 0)
}

// noteRTT folds a measured round trip into the average.
func (s *spinner) noteRTT(d time.Duration) {
	old := s.rttNs.Load()
	s.rttNs.Store(old + (int64(d)-old)/8)
}

// stats adds the spin counts to an engine's Facts stats.
func (s *spinner) stats(m map[string]int64) {
	if s == nil || s.max <= 0 {
		return
	}
	m["spin_max_ns"] = int64(s.max)
	m["spin_hits"] = s.hits.Load()
	m["spin_misses"] = s.misses.Load()
	m["spin_ns"] = s.spunNs.Load()
}
