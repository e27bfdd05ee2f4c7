package server

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Returning freed memory to the OS. After a large free (a 150 MB argument's query buffer, a
// deleted big value, a big reply's buffers, clients gone) Go keeps the pages until a later GC
// lowers its heap goal and its background scavenger gets to them, and an idle server runs no
// GC for two minutes: it stayed at 417-619 MB of RSS after a 150 MB SET, where Redis's
// allocator returns the pages at once. So when a server has run commands and then none for
// releaseIdle, and the process's heap holds at least releaseMin, the cron forces a collection
// and returns the free pages (debug.FreeOSMemory): once per idle spell, and at most once per
// releaseEvery for the whole process (several servers may share one, in tests). Idle only:
// under load the collector runs anyway and the pages are reused, and a forced collection would
// cost a benchmark's latencies; at idle it costs CPU in proportion to the live heap, once.
const (
	releaseMin   = 64 << 20
	releaseIdle  = time.Second
	releaseEvery = 5 * time.Second
)

var releaseState struct {
	sync.Mutex
	last time.Time
	n    int64 // releases done
}

// heapHeld is the heap memory the process holds: objects (live, or dead and not yet collected)
// and free pages not yet returned to the OS.
func heapHeld() uint64 {
	ss := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(ss)
	var n uint64
	for _, s := range ss {
		if s.Value.Kind() == metrics.KindUint64 {
			n += s.Value.Uint64()
		}
	}
	return n
}

// releaseFreedMemory forces a collection and returns the free pages to the OS if the heap
// holds releaseMin and none was done in the last releaseEvery; it reports whether it did.
func releaseFreedMemory(now time.Time) bool {
	if heapHeld() < releaseMin {
		return false
	}
	st := &releaseState
	st.Lock()
	if now.Sub(st.last) < releaseEvery {
		st.Unlock()
		return false
	}
	st.last = now
	st.n++
	st.Unlock()
	debug.FreeOSMemory()
	return true
}

// releaseIfIdle runs from the cron: once the server has run no command for releaseIdle after
// running some since its last release, it releases (releaseFreedMemory). Cron goroutine only.
func (s *Server) releaseIfIdle(now time.Time) {
	s.mu.Lock()
	n := s.stats.commandsProcessed
	s.mu.Unlock()
	if n != s.cronCmds || s.cronIdleSince.IsZero() {
		s.cronCmds, s.cronIdleSince = n, now
		return
	}
	if n != s.releasedAt && now.Sub(s.cronIdleSince) >= releaseIdle && releaseFreedMemory(now) {
		s.releasedAt = n
	}
}
