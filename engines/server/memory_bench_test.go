package server

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"qbench/engines/server/resp"
)

// pipeline sends the commands built by gen(i) for i in [0,n), 1000 at a time, and reads
// every reply.
func pipeline(tb testing.TB, addr string, n int, gen func(i int) []string) {
	pipelineBy(tb, addr, n, 1000, gen)
}

// pipelineBy is pipeline sending batch commands at a time.
func pipelineBy(tb testing.TB, addr string, n, batch int, gen func(i int) []string) {
	c := dialRaw(tb, addr)
	for i := 0; i < n; i += batch {
		var b []byte
		k := 0
		for j := i; j < i+batch && j < n; j++ {
			args := gen(j)
			b = resp.AppendArrayLen(b, len(args))
			for _, a := range args {
				b = resp.AppendBulkString(b, a)
			}
			k++
		}
		if _, err := c.c.Write(b); err != nil {
			tb.Fatal(err)
		}
		for ; k > 0; k-- {
			if _, err := c.readReply(60 * time.Second); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// memLoads are the loads BenchmarkMemoryVsRedis measures, each on a fresh pair of servers:
// the RSS growth of the last step is what is reported (earlier steps build its input).
var memLoads = []struct {
	name  string
	steps []func(tb testing.TB, addr string, n int)
}{
	{"stream-1M", []func(testing.TB, string, int){xaddMany}},
	{"pel-1M", []func(testing.TB, string, int){xaddMany, readIntoPEL}},
	{"list-1M", []func(testing.TB, string, int){lpushMany}},
	// Other element sizes, so what the list saves is not tuned to one: 16 bytes (18 a listpack
	// entry, 455 to a block) and 1 KiB (7 to a block, as to one of Redis's 8 KB listpacks).
	{"list-1M-16B", []func(testing.TB, string, int){lpushSized(16)}},
	{"list-1M-1KiB", []func(testing.TB, string, int){lpushSized(1024)}},
}

// lpushSized pushes n elements of size bytes onto list "memlist".
func lpushSized(size int) func(testing.TB, string, int) {
	return func(tb testing.TB, addr string, n int) {
		payload := strings.Repeat("x", size-1)
		pipeline(tb, addr, n, func(i int) []string { return []string{"LPUSH", "memlist", payload + strconv.Itoa(i%10)} })
	}
}

// readIntoPEL reads the whole of stream "mem" into one group's PEL, 10,000 entries per
// XREADGROUP, one XREADGROUP at a time: sent all at once, up to 100 replies of 1 MB were
// queued on the server together, and what the allocators kept of them swung Redis's RSS growth
// from 120 to 185 MB between runs (and ours from 119 to 143), more than the PEL's own size.
func readIntoPEL(tb testing.TB, addr string, n int) {
	pipeline(tb, addr, 1, func(int) []string { return []string{"XGROUP", "CREATE", "mem", "g", "0"} })
	pipelineBy(tb, addr, n/10000, 1, func(int) []string {
		return []string{"XREADGROUP", "GROUP", "g", "c1", "COUNT", "10000", "STREAMS", "mem", ">"}
	})
}

// lpushMany pushes n 32-byte elements onto list "memlist".
func lpushMany(tb testing.TB, addr string, n int) {
	payload := strings.Repeat("x", 32)
	pipeline(tb, addr, n, func(i int) []string { return []string{"LPUSH", "memlist", payload + strconv.Itoa(i%10)} })
}

// BenchmarkMemoryVsRedis prints, per load, how much the RSS of a child server process and of
// a real redis-server (its INFO used_memory_rss) grew. It is a benchmark, not a test, because
// RSS depends on the machine; run it with
//
//	go test -run '^$' -bench MemoryVsRedis -benchtime 1x ./engines/server
func BenchmarkMemoryVsRedis(b *testing.B) {
	const n = 1000000
	for _, l := range memLoads {
		b.Run(l.name, func(b *testing.B) {
			for range b.N {
				realAddr := startOwnRealRedis(b)
				ourAddr, pid := startChildServer(b)
				for i, step := range l.steps {
					last := i == len(l.steps)-1
					var r0, q0 int64
					if last {
						r0, q0 = infoField(b, realAddr, "used_memory_rss"), rssOf(b, pid)
					}
					step(b, realAddr, n)
					step(b, ourAddr, n)
					if last {
						time.Sleep(time.Second) // let a background GC finish returning memory
						r, q := infoField(b, realAddr, "used_memory_rss")-r0, rssOf(b, pid)-q0
						b.ReportMetric(float64(q)/1e6, "qbench-MB")
						b.ReportMetric(float64(r)/1e6, "redis-MB")
						b.ReportMetric(float64(q)/float64(r), "ratio")
						b.Logf("%s: qbench RSS +%.1f MB, redis RSS +%.1f MB, ratio %.2f", l.name, float64(q)/1e6, float64(r)/1e6, float64(q)/float64(r))
					}
				}
			}
		})
	}
}

// heapPerEntry is the live heap after GC, in bytes per entry, that step adds on a fresh
// in-process server once before has run.
func heapPerEntry(t *testing.T, n int, before, step func(testing.TB, string, int)) float64 {
	s := startServer(t, Config{})
	addr := s.Addr()
	if before != nil {
		before(t, addr, n)
	}
	// Two collections each time: recycled reply buffers (outbuf.go) sit in a sync.Pool, which
	// lets go of what it holds only at the second; they are a cache, not what an entry costs.
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m0)
	step(t, addr, n)
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	return (float64(m1.HeapAlloc) - float64(m0.HeapAlloc)) / float64(n)
}

// TestHeapPerEntry bounds what one pending entry, one stream entry and one list element cost
// in live heap. Redis 7.0 spends about 96 bytes of RSS per pending entry (a streamNACK of 32
// bytes in two rax trees), so ours must stay well under that; stream entries and list elements
// keep their bytes off the heap, so theirs must stay near nothing.
func TestHeapPerEntry(t *testing.T) {
	const n = 200000
	for _, tc := range []struct {
		name   string
		before func(testing.TB, string, int)
		step   func(testing.TB, string, int)
		max    float64
	}{
		{"pending entry", xaddMany, readIntoPEL, 72},
		// Entry bytes are off the heap: what is left is per node (a stream node's header, 1.4
		// bytes an entry; 3.1 while each node kept its own copy of the field names) and per 8 KB
		// block (a list chunk's 32-byte header and ring slot, 0.1). The heap is the process's:
		// under -race in the full suite other tests' goroutines added 0.5 (0.6 for the list), so
		// the bounds leave that much and still catch the copied field names (3.1) and any
		// allocation per element (8 bytes at least).
		{"stream entry", nil, xaddMany, 2.5},
		{"list element", nil, lpushMany, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := heapPerEntry(t, n, tc.before, tc.step)
			t.Logf("%s: %.1f heap bytes per entry", tc.name, got)
			if got > tc.max {
				t.Fatalf("%s costs %.1f heap bytes, want at most %.1f", tc.name, got, tc.max)
			}
		})
	}
}
