package server

import (
	"testing"
	"time"
)

var sink []byte

// garbage250 leaves 250 MB of touched, unreferenced memory, as a big argument's query buffer
// does once its client is gone.
func garbage250() {
	sink = make([]byte, 250<<20)
	for i := 0; i < len(sink); i += 4096 {
		sink[i] = 1
	}
	sink = nil
}

// TestReleaseFreedMemory: a server that ran commands and then none for releaseIdle returns
// the pages of a large free to the OS at once rather than minutes later (the heap held drops
// by the garbage); not while commands run, once per idle spell, and not twice within
// releaseEvery in the process (a forced collection costs the whole process).
func TestReleaseFreedMemory(t *testing.T) {
	s := New(Config{})
	now := time.Now()
	if releaseState.last.After(now) {
		now = releaseState.last
	}
	now = now.Add(time.Hour) // past any release another test (or run) made
	tick := func(dt time.Duration, cmds int64) {
		now = now.Add(dt)
		s.mu.Lock()
		s.stats.commandsProcessed += cmds
		s.mu.Unlock()
		s.releaseIfIdle(now)
	}
	garbage250()
	before := heapHeld()
	tick(0, 1)
	tick(releaseIdle/2, 1) // busy
	if releaseState.last.Equal(now) {
		t.Fatal("released while commands ran")
	}
	tick(releaseIdle/2, 0)
	tick(releaseIdle, 0) // idle for releaseIdle
	if !releaseState.last.Equal(now) {
		t.Fatal("no release on an idle server")
	}
	if held := heapHeld(); held+200<<20 > before {
		t.Fatalf("heap held %d after the release, %d before it: the 250 MB of garbage is still there", held, before)
	}
	garbage250()
	tick(releaseEvery, 0)
	if releaseState.last.Equal(now) {
		t.Fatal("released twice in one idle spell")
	}
	tick(0, 1)
	tick(releaseIdle, 0)
	if !releaseState.last.Equal(now) {
		t.Fatal("no release in the next idle spell")
	}
}
