package server

import (
	"bytes"
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestOutQueue: whatever mix of copied and shared pushes, partial writes (advance) and
// put-backs (prepend), the queue yields exactly the bytes pushed, in order; a copy never
// writes into a shared message; reset keeps a small segment list and drops a burst's.
func TestOutQueue(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			var q, later outQueue
			var want, wantLater []byte // what q and later hold
			var shared [][]byte
			sizes := []int{0, 1, 100, shareMin - 1, shareMin, 4000, outChunk, outChunk + 1, 100000}
			for step := 0; step < 400; step++ {
				b := make([]byte, sizes[rng.Intn(len(sizes))])
				rng.Read(b)
				target, w := &q, &want
				if rng.Intn(4) == 0 {
					target, w = &later, &wantLater // pushed while q was out being written
				}
				if rng.Intn(2) == 0 {
					target.pushShared(b)
					shared = append(shared, b)
				} else {
					target.pushCopy(b)
					c := append([]byte(nil), b...)
					rng.Read(b) // the caller reuses its buffer: the queue has its own copy
					b = c
				}
				*w = append(*w, b...)
				if rng.Intn(10) == 0 { // a partial write; what came meanwhile goes behind the rest
					n := rng.Intn(q.n + 1)
					q.advance(n)
					later.prepend(&q)
					q, later = later, outQueue{}
					want, wantLater = append(want[n:], wantLater...), nil
				}
			}
			later.prepend(&q) // what came meanwhile goes behind q's
			q = later
			want = append(want, wantLater...)
			if got := flatten(q.segs); !bytes.Equal(got, want) || q.n != len(want) {
				t.Fatalf("queue holds %d bytes (n=%d), want %d; equal %v", len(got), q.n, len(want), bytes.Equal(got, want))
			}
			if got := bytes.Join(q.vectors(), nil); !bytes.Equal(got, want) {
				t.Fatal("vectors differ from the segments")
			}
			var w bytes.Buffer
			if n, err := q.writeTo(&w); err != nil || int(n) != len(want) || !bytes.Equal(w.Bytes(), want) {
				t.Fatalf("writeTo: %d, %v", n, err)
			}
			for _, b := range shared {
				for _, s := range q.segs {
					if s.owned && len(b) > 0 && unsafe.SliceData(s.b) == unsafe.SliceData(b) {
						t.Fatal("a shared message is counted as the queue's own chunk")
					}
				}
			}
			q.reset()
			if q.n != 0 || len(q.segs) != 0 {
				t.Fatalf("reset left %d bytes, %d segments", q.n, len(q.segs))
			}
		})
	}
	// A subscriber sent a few messages per batch reuses its chunk and segment list: no
	// allocation per batch once warm.
	var warm outQueue
	msg := []byte("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n")
	if a := testing.AllocsPerRun(1000, func() {
		warm.pushCopy(msg)
		warm.pushShared(msg)
		warm.vectors()
		warm.reset()
	}); a != 0 {
		t.Errorf("%.1f allocations per batch of two small messages", a)
	}
	var big outQueue
	for range maxSpareSegs + 1 {
		big.pushShared(make([]byte, shareMin))
	}
	big.reset()
	if big.segs != nil {
		t.Errorf("a burst's segment list (%d) was kept", cap(big.segs))
	}
}

func flatten(segs []outSeg) []byte {
	var b []byte
	for _, s := range segs {
		b = append(b, s.b...)
	}
	return b
}

// TestPublishSharesOneEncoding: a burst published to several subscribers that do not read
// costs its size once per encoding (one per protocol for channel subscribers, one per pattern
// for pattern subscribers), not once per subscriber: each subscriber's queue refers to the
// same bytes. Each subscriber's buffer grew by append, copied at every doubling: 200 messages
// of 64 KB (12.5 MB) to 4 channel and 2 pattern subscribers allocated 35x the burst; the
// bound here is 2.5x (two encodings, each rounded up to whole pages).
func TestPublishSharesOneEncoding(t *testing.T) {
	s := New(Config{})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conf.obuf[obufPubsub] = obufLimit{} // no limit: the queues hold the whole burst
	var subs []*client
	sub := func(set map[string]map[*client]struct{}, name string) *client {
		c := &client{s: s, proto: 2, async: true, wake: make(chan struct{}, 1)}
		if set[name] == nil {
			set[name] = map[*client]struct{}{}
		}
		set[name][c] = struct{}{}
		subs = append(subs, c)
		return c
	}
	for range 4 {
		sub(s.pubsub.channels, "ch")
	}
	for range 2 {
		sub(s.pubsub.patterns, "c*")
	}
	msg := []byte(strings.Repeat("m", 64<<10))
	const n = 200
	burst := uint64(n * len(msg))
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range n {
		if got := s.publish("ch", msg); got != 6 {
			t.Fatalf("PUBLISH reached %d subscribers, want 6", got)
		}
	}
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > burst*25/10 {
		t.Errorf("%d bytes allocated for a %d-byte burst to 6 subscribers (%.1fx)", got, burst, float64(got)/float64(burst))
	}
	for _, c := range subs {
		if len(c.pending.segs) != n {
			t.Fatalf("a subscriber's queue has %d segments, want %d references", len(c.pending.segs), n)
		}
	}
	for i, c := range subs[1:] {
		ref := subs[0]
		if i >= 3 {
			ref = subs[4]
		}
		if unsafe.SliceData(c.pending.segs[n-1].b) != unsafe.SliceData(ref.pending.segs[n-1].b) {
			t.Errorf("subscriber %d holds its own copy of the message", i+1)
		}
	}
	var w bytes.Buffer
	subs[5].pending.writeTo(&w)
	want := "*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$65536\r\n" + string(msg) + "\r\n"
	if w.Len() != n*len(want) || w.String()[:len(want)] != want {
		t.Errorf("pattern subscriber got %d bytes starting %.60q", w.Len(), w.String())
	}
}

// TestSlowSubscribersGetEverything: subscribers of both protocols and a pattern subscriber that
// read nothing until the publisher is done get every message, small (copied into chunks) and
// large (shared), in order, through the event loop's partial writes and the writer goroutine.
func TestSlowSubscribersGetEverything(t *testing.T) {
	s := startServer(t, Config{})
	pub := dialRaw(t, s.Addr())
	type subscriber struct {
		c     *rawConn
		proto int
		pat   bool
	}
	var subs []subscriber
	for _, sc := range []subscriber{{proto: 2}, {proto: 3}, {proto: 2, pat: true}} {
		sc.c = dialRaw(t, s.Addr())
		if sc.proto == 3 {
			writeAll(t, sc.c, cmd("HELLO", "3"))
			readN(t, sc.c, 1)
		}
		if sc.pat {
			writeAll(t, sc.c, cmd("PSUBSCRIBE", "ch*"))
		} else {
			writeAll(t, sc.c, cmd("SUBSCRIBE", "ch"))
		}
		readN(t, sc.c, 1)
		subs = append(subs, sc)
	}
	rng := rand.New(rand.NewSource(7))
	var msgs []string
	total := 0
	for total < 12<<20 {
		size := []int{5, 300, 2000, 40000, 300000}[rng.Intn(5)]
		m := fmt.Sprintf("%06d", len(msgs)) + strings.Repeat(string(rune('a'+rng.Intn(26))), size)
		msgs = append(msgs, m)
		total += len(m)
		writeAll(t, pub, cmd("PUBLISH", "ch", m))
		if r := readN(t, pub, 1); r != ":3\r\n" {
			t.Fatalf("PUBLISH: %q", r)
		}
	}
	for _, sc := range subs {
		for i, m := range msgs {
			want := fmt.Sprintf("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$%d\r\n%s\r\n", len(m), m)
			if sc.proto == 3 {
				want = ">" + want[1:]
			}
			if sc.pat {
				want = fmt.Sprintf("*4\r\n$8\r\npmessage\r\n$3\r\nch*\r\n$2\r\nch\r\n$%d\r\n%s\r\n", len(m), m)
			}
			b, err := sc.c.readReply(10 * time.Second)
			if err != nil || string(b) != want {
				t.Fatalf("proto %d pattern %v, message %d: %v, got %.60q", sc.proto, sc.pat, i, err, b)
			}
		}
	}
}
