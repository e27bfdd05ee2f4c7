package server

import (
	"math"
	"time"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
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
	// goneReply, if set (XREADGROUP), is the reply when a key it waits on turns out deleted or
	// no longer a stream after a command (Redis 7.0's unblockDeletedStreamReadgroupClients).
	goneReply any
	args      [][]byte // the command, for the AOF when it is served
	cmd       *command // for INFO commandstats when it is answered

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
	readySet map[dbKey]uint8 // readyData | readyGone
}

// Why a key is ready: data may have arrived (a push, an XADD, a key created), or the key may
// have been deleted or overwritten (only blocked XREADGROUPs care).
const (
	readyData uint8 = 1 << iota
	readyGone
)

func newBlockRegistry() *blockRegistry {
	return &blockRegistry{byKey: map[dbKey][]*blockSpec{}, readySet: map[dbKey]uint8{}}
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

// signalKey notes that key in db was written, if anyone waits on it (Redis's
// signalKeyAsReady). Store lock held.
func (s *Server) signalKey(db int, key string) { s.markReady(db, key, readyData) }

// signalDeleted notes that key in db may have been deleted or overwritten (Redis's
// signalDeletedKeyAsReady). Store lock held.
func (s *Server) signalDeleted(db int, key string) { s.markReady(db, key, readyGone) }

func (s *Server) markReady(db int, key string, why uint8) {
	r := s.blocked
	if len(r.byKey) == 0 {
		return
	}
	dk := dbKey{db, key}
	if _, ok := r.byKey[dk]; !ok {
		return
	}
	old, queued := r.readySet[dk]
	r.readySet[dk] = old | why
	if !queued {
		r.ready = append(r.ready, dk)
	}
}

// signalDB marks every key of db that someone waits on (FLUSHDB, FLUSHALL, SWAPDB).
func (s *Server) signalDB(db int, why uint8) {
	for dk := range s.blocked.byKey {
		if dk.db == db {
			s.markReady(dk.db, dk.key, why)
		}
	}
}

// signalKeyBytes is signalKey for a key given as bytes; it allocates only if someone waits.
func (s *Server) signalKeyBytes(db int, key []byte) {
	if len(s.blocked.byKey) == 0 {
		return
	}
	s.signalKey(db, string(key))
}

// handleReady serves clients blocked on keys written by the last command (a whole MULTI/EXEC
// counts as one), against the state it left, in the order they blocked, as Redis's
// handleClientsBlockedOnKeys does after call(). Serving one may write another key (BLMOVE),
// which is then handled too.
func (s *Server) handleReady() {
	r := s.blocked
	for len(r.ready) > 0 {
		dk := r.ready[0]
		r.ready = r.ready[1:]
		why := r.readySet[dk]
		delete(r.readySet, dk)
		q := append([]*blockSpec(nil), r.byKey[dk]...)
		if why&readyData != 0 {
			for _, b := range q {
				if b.served {
					continue
				}
				v, ok := b.serve(dk.key)
				if !ok {
					continue
				}
				s.wake(b, v, true, dk.key)
			}
		}
		// Whatever made the key ready, XREADGROUPs waiting on a key that is no longer a
		// stream are answered with an error.
		if _, isStream := s.store.DBs[dk.db].Get(dk.key).(*store.Stream); !isStream {
			for _, b := range q {
				if !b.served && b.goneReply != nil {
					s.wake(b, b.goneReply, false, dk.key)
				}
			}
		}
	}
	r.ready = r.ready[:0]
}

// wake answers a blocked client; logged says whether its command wrote (the AOF logs it).
func (s *Server) wake(b *blockSpec, reply any, logged bool, key string) {
	b.served = true
	if logged {
		s.p.logServed(b, key)
	}
	s.blocked.remove(b)
	b.done <- reply
	if b.c.inLoop() {
		// The event loop serves this client: it takes the reply in its next turn (or this one,
		// if this write is the loop's own), no goroutine involved.
		s.loop.noteUnblocked(b)
		return
	}
	s.woken++
}

// unblock answers a blocked client from outside (CLIENT UNBLOCK): with its timeout reply, or
// with err. It reports whether the client was blocked.
func (s *Server) unblock(o *client, err error) bool {
	b := o.blockedOn
	if b == nil || b.served {
		return false
	}
	var reply any = b.timeoutReply
	if err != nil {
		reply = err
	}
	s.wake(b, reply, false, "")
	return true
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

// blockingPopKeys is the shape BLPOP/BRPOP/BLMPOP and BZPOPMIN/BZPOPMAX share: pop from the
// first of keys that has something now, else block on all of them and, when one is written,
// pop from that key alone. ready says whether key holds a non-empty value of the right type;
// pop pops from keys (nil, nil when all are empty).
func (c *client) blockingPopKeys(keys [][]byte, timeoutArg []byte, ready func(key []byte) bool, pop func(keys [][]byte) (any, error)) (any, error) {
	timeout, err := parseTimeoutSeconds(timeoutArg)
	if err != nil {
		return nil, err
	}
	v, err := pop(keys)
	if err != nil || v != nil {
		return v, err
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = string(k)
	}
	return &blockSpec{
		keys:         names,
		timeout:      timeout,
		timeoutReply: resp.NullArray,
		serve: func(key string) (any, bool) {
			if !ready([]byte(key)) {
				return nil, false
			}
			v, _ := pop([][]byte{[]byte(key)})
			// A served command is logged from the blocked args (logServed), not as what pop set.
			c.logAs = nil
			return v, v != nil
		},
	}, nil
}
