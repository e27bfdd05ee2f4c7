package redisq

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// Routing: round-robin and producer give exact counts per shard; zipf, for a fixed seed, gives
// each shard its Zipf share within bounds and the same shards every time.
func TestRouting(t *testing.T) {
	const producers, perProducer = 3, 1200
	counts := func(r router) []int {
		c := make([]int, r.n)
		for p := 0; p < producers; p++ {
			for seq := uint64(0); seq < perProducer; seq++ {
				c[r.route(p, seq)]++
			}
		}
		return c
	}
	exact := []struct {
		name    string
		n       int
		routing string
		want    []int
	}{
		{"one shard", 1, RouteRoundRobin, []int{3600}},
		{"round-robin 4", 4, RouteRoundRobin, []int{900, 900, 900, 900}},
		{"round-robin default", 4, "", []int{900, 900, 900, 900}},
		{"round-robin 7 (not dividing)", 7, RouteRoundRobin, []int{514, 515, 516, 515, 514, 513, 513}},
		{"producer 4", 4, RouteProducer, []int{1200, 1200, 1200, 0}},
		{"producer 2", 2, RouteProducer, []int{2400, 1200}},
	}
	for _, c := range exact {
		t.Run(c.name, func(t *testing.T) {
			if got := counts(newRouter(c.n, c.routing, 0, 1)); !slices.Equal(got, c.want) {
				t.Fatalf("counts %v, want %v", got, c.want)
			}
		})
	}
	// Round robin: consecutive messages of one producer go to consecutive shards.
	r := newRouter(4, RouteRoundRobin, 0, 1)
	for seq := uint64(0); seq < 8; seq++ {
		if got, want := r.route(1, seq), int((1+seq)%4); got != want {
			t.Fatalf("round-robin producer 1 seq %d: shard %d, want %d", seq, got, want)
		}
	}
	for _, c := range []struct {
		n    int
		skew float64
	}{{4, 1.1}, {8, 1.5}, {16, 2}} {
		z := newRouter(c.n, RouteZipf, c.skew, 42)
		got := counts(z)
		total := float64(producers * perProducer)
		norm := 0.0
		for k := 0; k < c.n; k++ {
			norm += 1 / math.Pow(float64(k+1), c.skew)
		}
		for k, n := range got {
			want := total / math.Pow(float64(k+1), c.skew) / norm
			// Binomial standard deviation, 5 of them.
			tol := 5 * math.Sqrt(want*(1-want/total))
			if math.Abs(float64(n)-want) > tol {
				t.Fatalf("zipf n=%d s=%g: shard %d got %d, want %.0f +- %.0f (all %v)", c.n, c.skew, k, n, want, tol, got)
			}
		}
		if !slices.Equal(got, counts(newRouter(c.n, RouteZipf, c.skew, 42))) {
			t.Fatal("zipf routing is not repeatable for a seed")
		}
		if slices.Equal(got, counts(newRouter(c.n, RouteZipf, c.skew, 43))) {
			t.Fatal("zipf routing ignores the seed")
		}
		for k := 1; k < c.n; k++ {
			if got[k] > got[0] {
				t.Fatalf("zipf: shard %d (%d) hotter than shard 0 (%d)", k, got[k], got[0])
			}
		}
	}
}

// Each receiving group's members split its shards so that every shard is read by one member.
func TestShareCoversEveryShard(t *testing.T) {
	cases := []struct {
		shards, consumers, groups int
	}{{4, 1, 1}, {4, 2, 1}, {4, 3, 1}, {4, 4, 1}, {4, 6, 1}, {4, 8, 1}, {4, 4, 2}, {4, 3, 3}, {8, 5, 2}, {1, 3, 1}, {16, 1, 1}}
	for _, c := range cases {
		s := &shards{n: c.shards}
		readers := make([][]int, c.groups) // [group][shard] members reading it
		for g := range readers {
			readers[g] = make([]int, c.shards)
		}
		for id := 0; id < c.consumers; id++ {
			m, members := member(id, c.consumers, c.groups)
			for _, k := range s.share(m, members) {
				readers[id%c.groups][k]++
			}
		}
		for g, rs := range readers {
			for k, n := range rs {
				if n == 0 {
					t.Fatalf("%+v: group %d never reads shard %d (%v)", c, g, k, rs)
				}
				if c.consumers/c.groups <= c.shards && n != 1 {
					t.Fatalf("%+v: group %d reads shard %d with %d members (%v)", c, g, k, n, rs)
				}
			}
		}
	}
}

// stampSeq reads the runner's stamp layout (bench/stamp.go): magic, then the sequence number at
// bytes 16-24.
func TestStampSeq(t *testing.T) {
	p := make([]byte, 32)
	copy(p, "qbm1")
	binary.BigEndian.PutUint64(p[16:], 123456789)
	if seq, ok := stampSeq(p); !ok || seq != 123456789 {
		t.Fatalf("seq %d ok %v", seq, ok)
	}
	if _, ok := stampSeq([]byte("not a stamp at all, not at all!!")); ok {
		t.Fatal("read a stamp from a foreign payload")
	}
	if _, ok := stampSeq(p[:20]); ok {
		t.Fatal("read a stamp from a short payload")
	}
}
