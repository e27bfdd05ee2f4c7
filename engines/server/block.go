package server

import (
	"math"
	"time"
)

// blockSpec is a blocking command that found nothing to serve: the client waits until serve
// succeeds on one of its keys, the timeout passes (timeoutReply) or it disconnects.
type blockSpec struct {
	db           int
	keys         []string
	timeout      time.Duration // 0 waits forever
	deadline     time.Time
	timeoutReply any
	// serve retries the command when key is ready. ok is false if it still cannot be served.
	// Store lock held.
	serve func(key string) (reply any, ok bool)
	args  [][]byte // the command, for the AOF when it is served

	c      *client
	served bool     // guarded by the store lock
	done   chan any // the reply, sent once when served
}

type dbKey struct {
	db  int
	key string
}

// blockRegistry holds blocked clients per key, in the order they blocked (Redis serves them
// first come, first served), and the keys written since they were last checked.
type blockRegistry struct {
	byKey    map[dbKey][]*blockSpec
	ready    []dbKey
	readySet map[dbKey]bool
}

func newBlockRegistry() *blockRegistry {
	return &blockRegistry{byKey: map[dbKey][]*blockSpec{}, readySet: map[dbKey]bool{}}
}

func (r *blockRegistry) add(c *client, b *blockSpec) {
	b.c = c
	c.blockedOn = b
	b.db = c.db
	b.done = make(chan any, 1)
	if b.timeout > 0 {
		b.deadline = time.Now().Add(b.timeout)
	}
	for _, k := range b.keys {
		dk := dbKey{b.db, k}
		r.byKey[dk] = append(r.byKey[dk], b)
	}
}

func (r *blockRegistry) remove(b *blockSpec) {
	if b.c != nil && b.c.blockedOn == b {
		b.c.blockedOn = nil
	}
	for _, k := range b.keys {
		dk := dbKey{b.db, k}
		q := r.byKey[dk]
		for i, x := range q {
			if x == b {
				q = append(q[:i], q[i+1:]...)
				break
			}
		}
		if len(q) == 0 {
			delete(r.byKey, dk)
		} else {
			r.byKey[dk] = q
		}
	}
}

// count is the number of blocked clients.
func (r *blockRegistry) count() int {
	seen := map[*blockSpec]bool{}
	for _, q := range r.byKey {
		for _, b := range q {
			seen[b] = true
		}
	}
	return len(seen)
}

// signalKey notes that key in db was written, if anyone waits on it. Store lock held.
func (s *Server) signalKey(db int, key string) {
	if len(s.blocked.byKey) == 0 {
		return
	}
	dk := dbKey{db, key}
	if _, ok := s.blocked.byKey[dk]; !ok || s.blocked.readySet[dk] {
		return
	}
	s.blocked.readySet[dk] = true
	s.blocked.ready = append(s.blocked.ready, dk)
}

// signalKeyBytes is signalKey for a key given as bytes; it allocates only if someone waits.
func (s *Server) signalKeyBytes(db int, key []byte) {
	if len(s.blocked.byKey) == 0 {
		return
	}
	s.signalKey(db, string(key))
}

// handleReady serves clients blocked on keys written by the last command, in the order they
// blocked. Serving one may write another key (BLMOVE), which is then handled too.
func (s *Server) handleReady() {
	r := s.blocked
	for len(r.ready) > 0 {
		dk := r.ready[0]
		r.ready = r.ready[1:]
		delete(r.readySet, dk)
		q := append([]*blockSpec(nil), r.byKey[dk]...)
		for _, b := range q {
			if b.served {
				continue
			}
			v, ok := b.serve(dk.key)
			if !ok {
				continue
			}
			b.served = true
			s.p.logServed(b, dk.key)
			r.remove(b)
			b.done <- v
		}
	}
	r.ready = r.ready[:0]
}

// parseTimeoutSeconds parses BLPOP-style timeouts: seconds, fractions allowed, rounded up to
// the millisecond as Redis's getTimeoutFromObjectOrReply does.
func parseTimeoutSeconds(b []byte) (time.Duration, error) {
	f, ok := parseFloat(b)
	if !ok {
		return 0, errTimeoutNotFloat
	}
	ms := math.Ceil(f * 1000)
	if ms > math.MaxInt64/2 {
		return 0, errTimeoutOutOfRange
	}
	if ms < 0 {
		return 0, errTimeoutNegative
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// parseTimeoutMs parses XREAD-style BLOCK milliseconds.
func parseTimeoutMs(b []byte) (time.Duration, error) {
	n, ok := parseInt(b)
	if !ok {
		return 0, errTimeoutNotInt
	}
	if n < 0 {
		return 0, errTimeoutNegative
	}
	return time.Duration(n) * time.Millisecond, nil
}
