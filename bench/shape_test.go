package bench

import (
	"math"
	"testing"
	"time"
)

// perSecond counts, over all producers, the messages intended in each second of d.
func perSecond(ps []Pacer, d time.Duration) []int64 {
	var out []int64
	var prev int64
	for t := time.Second; t <= d; t += time.Second {
		var n int64
		for _, p := range ps {
			n += int64(p.CountBefore(t))
		}
		out = append(out, n-prev)
		prev = n
	}
	return out
}

func pacers(shape *Shape, rate float64, poisson bool, n int, d time.Duration) []Pacer {
	ps := make([]Pacer, n)
	for i := range ps {
		ps[i] = NewShapedPacer(rate, shape, poisson, 7, i, n, d)
	}
	return ps
}

// Intended times follow the profile exactly: each second holds the profile's integral over it.
func TestProfileExactCountsPerSecond(t *testing.T) {
	cases := []struct {
		name  string
		shape *Shape
		d     time.Duration
		want  []int64
	}{
		// 1000 + 200 t msg/s: second i offers 1100 + 200 i.
		{"ramp 1000 to 3000 over 10s", NewShape([]Segment{{10 * time.Second, 1000, 3000}}, false), 10 * time.Second,
			[]int64{1100, 1300, 1500, 1700, 1900, 2100, 2300, 2500, 2700, 2900}},
		{"ramp down 4000 to 0 over 4s", NewShape([]Segment{{4 * time.Second, 4000, 0}}, false), 4 * time.Second,
			[]int64{3500, 2500, 1500, 500}},
		{"steps 1000 for 2s then 5000 for 2s, the last rate holds", NewShape([]Segment{{2 * time.Second, 1000, 1000}, {2 * time.Second, 5000, 5000}}, false), 6 * time.Second,
			[]int64{1000, 1000, 5000, 5000, 5000, 5000}},
		{"burst 2000 with 8000 for the last 1s of every 3s", NewShape([]Segment{{2 * time.Second, 2000, 2000}, {time.Second, 8000, 8000}}, true), 9 * time.Second,
			[]int64{2000, 2000, 8000, 2000, 2000, 8000, 2000, 2000, 8000}},
	}
	for _, c := range cases {
		for _, n := range []int{1, 3, 4} {
			t.Run(c.name, func(t *testing.T) {
				got := perSecond(pacers(c.shape, 0, false, n, c.d), c.d)
				for i := range c.want {
					if got[i] != c.want[i] {
						t.Fatalf("%d producers: per second %v, want %v", n, got, c.want)
					}
				}
			})
		}
	}
}

// Pace and CountBefore agree, and intended times never go backwards, across a profile's joints.
func TestShapedPaceAgreesWithCount(t *testing.T) {
	shape := NewShape([]Segment{{2 * time.Second, 1000, 1000}, {time.Second, 8000, 8000}}, true)
	for _, poisson := range []bool{false, true} {
		p := NewShapedPacer(0, shape, poisson, 3, 1, 2, 6*time.Second)
		for _, el := range []time.Duration{0, 500 * time.Millisecond, 2 * time.Second, 2500 * time.Millisecond, 5999 * time.Millisecond, time.Hour} {
			due, _, stop := p.Pace(el, 0)
			want := p.CountBefore(el + 1)
			if stop || due != want {
				t.Fatalf("poisson=%v Pace(%v, 0) = %d (stop %v), CountBefore = %d", poisson, el, due, stop, want)
			}
		}
		for k := uint64(1); k < 20000; k++ {
			if p.IntendedAt(k) < p.IntendedAt(k-1) {
				t.Fatalf("poisson=%v: message %d at %v before %d at %v", poisson, k, p.IntendedAt(k), k-1, p.IntendedAt(k-1))
			}
		}
		if _, _, stop := p.Pace(time.Hour, p.CountBefore(time.Hour)); !stop {
			t.Fatalf("poisson=%v: schedule does not end", poisson)
		}
	}
}

// Poisson arrivals at 10,000 msg/s over 4 producers for 10 s: counts per 10 ms window have mean
// and variance near 100 (even spacing would have variance near 0), and the merged process keeps
// the rate. Fixed seed, so the bounds are deterministic; they are 4 standard errors wide.
func TestPoissonMeanAndVariance(t *testing.T) {
	const rate, producers, d = 10000.0, 4, 10 * time.Second
	for _, shape := range []*Shape{nil, NewShape([]Segment{{d, rate, rate}}, false)} {
		ps := pacers(shape, rate, true, producers, d)
		// Counts per window from each producer's arrivals read in order (random access costs up
		// to a block of gaps per call, which made CountBefore per window take 17 s under -race);
		// CountBefore is checked against them at every 50th window boundary.
		win := 10 * time.Millisecond
		counts := make([]float64, int(d/win))
		for _, p := range ps {
			for k := uint64(0); ; k++ {
				at := p.IntendedAt(k)
				if at >= d {
					break
				}
				counts[at/win]++
			}
		}
		var cum float64
		for w := range counts {
			cum += counts[w]
			if (w+1)%50 != 0 {
				continue
			}
			var n float64
			for _, p := range ps {
				n += float64(p.CountBefore(time.Duration(w+1) * win))
			}
			if n != cum {
				t.Fatalf("shape %v: CountBefore gives %.0f messages before %v, the arrivals %.0f", shape != nil, n, time.Duration(w+1)*win, cum)
			}
		}
		var sum, sq float64
		for _, c := range counts {
			sum += c
		}
		mean := sum / float64(len(counts))
		for _, c := range counts {
			sq += (c - mean) * (c - mean)
		}
		variance := sq / float64(len(counts)-1)
		// Total ~ Poisson(100,000): sd 316, so the mean per window is 100 +- 0.32 per sd.
		if math.Abs(mean-100) > 1.3 {
			t.Fatalf("shape %v: mean %.2f per 10ms, want 100", shape != nil, mean)
		}
		// The sample variance of 1000 Poisson(100) windows has sd about 100*sqrt(2/999) = 4.5.
		if variance < 82 || variance > 118 {
			t.Fatalf("shape %v: variance %.1f per 10ms, want about 100", shape != nil, variance)
		}
		// Exponential gaps: one producer's gaps have a coefficient of variation near 1.
		p := ps[0]
		var gs, gsq float64
		const m = 20000
		for k := uint64(1); k <= m; k++ {
			g := float64(p.IntendedAt(k) - p.IntendedAt(k-1))
			gs += g
			gsq += g * g
		}
		gm := gs / m
		cv := math.Sqrt(gsq/m-gm*gm) / gm
		if math.Abs(gm-4e5) > 4e5*0.03 || math.Abs(cv-1) > 0.03 {
			t.Fatalf("shape %v: gap mean %.0f ns (want 400000), cv %.3f (want 1)", shape != nil, gm, cv)
		}
	}
}

// The same seed gives the same schedule; another seed another one.
func TestPoissonSeeded(t *testing.T) {
	a := NewShapedPacer(1000, nil, true, 5, 0, 2, time.Second)
	b := NewShapedPacer(1000, nil, true, 5, 0, 2, time.Second)
	c := NewShapedPacer(1000, nil, true, 6, 0, 2, time.Second)
	// Read b out of order: random access must give what sequential reading gives.
	if b.IntendedAt(5000) != a.IntendedAt(5000) {
		t.Fatal("random access differs")
	}
	same := true
	for k := uint64(0); k < 3000; k++ {
		if a.IntendedAt(k) != b.IntendedAt(k) {
			t.Fatalf("message %d: %v vs %v with the same seed", k, a.IntendedAt(k), b.IntendedAt(k))
		}
		same = same && a.IntendedAt(k) == c.IntendedAt(k)
	}
	if same {
		t.Fatal("a different seed gave the same schedule")
	}
}
