package redisq

import (
	"runtime"
	"testing"
)

// TestBatchAllocs bounds what each Redis design allocates per batch of 16 messages of 256 B on
// redis-server (BenchmarkBatchAllocs's rig): a Send alone, and a Send with the Receive and Ack
// calls that deliver it. The bounds sit a little above what sessions 6 and 7 left (list send 5,
// roundtrip 23; stream 19 and 76; reliable-list 5 and 27; pubsub 19 and 163), less than a
// per-message allocation (16 a batch) above, and well below what was there before (list 31 and
// 54, stream 96 and 199, reliable-list 5 and 326, pubsub 72 and 248). The count is the process's,
// so the fewest of three tries is taken (a goroutine another test left running can add some).
func TestBatchAllocs(t *testing.T) {
	needRedis(t)
	bounds := map[string][2]uint64{ // per batch: send, roundtrip
		"list":          {8, 32},
		"stream":        {26, 88},
		"reliable-list": {8, 36},
		"pubsub":        {28, 175},
	}
	const batches = 40
	for _, design := range allocDesigns {
		t.Run(design, func(t *testing.T) {
			r := newAllocRig(t, design, true)
			defer r.close()
			for range 10 { // warm up: buffers grown, commands made, the reliable list's moves adapted
				r.send(t)
				r.drain(t, len(r.payloads))
			}
			measure := func(roundtrip bool) uint64 {
				n := uint64(1 << 62)
				for range 3 {
					var m0, m1 runtime.MemStats
					runtime.ReadMemStats(&m0)
					for range batches {
						r.send(t)
						if roundtrip {
							r.drain(t, len(r.payloads))
						}
					}
					runtime.ReadMemStats(&m1)
					if !roundtrip {
						r.drain(t, batches*len(r.payloads))
					}
					n = min(n, (m1.Mallocs-m0.Mallocs)/batches)
				}
				return n
			}
			b := bounds[design]
			if n := measure(false); n > b[0] {
				t.Errorf("send: %d allocations per batch of 16, want <= %d", n, b[0])
			}
			if n := measure(true); n > b[1] {
				t.Errorf("send, receive and ack: %d allocations per batch of 16, want <= %d", n, b[1])
			}
		})
	}
}
