package bench

import (
	"bytes"
	"compress/flate"
	"math"
	"qbench/scenarios"
	"sort"
	"testing"
)

func draws(z scenarios.Size, n int) []int {
	s := NewSizer(z, 11)
	out := make([]int, n)
	for i := range out {
		out[i] = s.Size(uint32(i%3), uint64(i/3))
	}
	return out
}

func TestSizeDistributions(t *testing.T) {
	const n = 60000
	t.Run("fixed", func(t *testing.T) {
		for _, v := range draws(scenarios.Fixed(300), 100) {
			if v != 300 {
				t.Fatalf("fixed size drew %d", v)
			}
		}
	})
	t.Run("uniform", func(t *testing.T) {
		d := draws(scenarios.Size{Dist: "uniform", Min: 100, Max: 200}, n)
		var sum float64
		lo, hi := math.MaxInt, 0
		for _, v := range d {
			sum += float64(v)
			lo, hi = min(lo, v), max(hi, v)
		}
		// Mean of 101 equally likely values 100..200 is 150; sd 29, so the mean's sd is 0.12.
		if lo != 100 || hi != 200 || math.Abs(sum/n-150) > 0.6 {
			t.Fatalf("uniform 100..200: range %d..%d, mean %.2f", lo, hi, sum/n)
		}
	})
	t.Run("lognormal", func(t *testing.T) {
		z := scenarios.Size{Dist: "lognormal", Median: 256, Sigma: 1}
		d := draws(z, n)
		sort.Ints(d)
		if med := d[n/2]; math.Abs(float64(med)-256) > 256*0.03 {
			t.Fatalf("median %d, want 256", med)
		}
		// The 84th percentile of a lognormal is median x e^sigma.
		if p84 := float64(d[int(0.8413*n)]); math.Abs(p84/256-math.E) > 0.1 {
			t.Fatalf("84th percentile %g, want %g", p84, 256*math.E)
		}
		if d[0] < StampSize || d[n-1] > z.Largest() {
			t.Fatalf("range %d..%d outside %d..%d", d[0], d[n-1], StampSize, z.Largest())
		}
	})
	t.Run("weighted", func(t *testing.T) {
		d := draws(scenarios.Size{Dist: "weighted", Sizes: []scenarios.WeightedSize{{Size: 100, Weight: 9}, {Size: 10000, Weight: 1}}}, n)
		var big int
		for _, v := range d {
			switch v {
			case 10000:
				big++
			case 100:
			default:
				t.Fatalf("weighted drew %d", v)
			}
		}
		// p = 0.1: sd of the share is 0.0012.
		if share := float64(big) / n; math.Abs(share-0.1) > 0.005 {
			t.Fatalf("share of 10000-byte messages %.4f, want 0.1", share)
		}
	})
	t.Run("seeded", func(t *testing.T) {
		z := scenarios.Size{Dist: "lognormal", Median: 256, Sigma: 1}
		a, b, c := NewSizer(z, 1), NewSizer(z, 1), NewSizer(z, 2)
		differ := false
		for i := uint64(0); i < 100; i++ {
			if a.Size(0, i) != b.Size(0, i) {
				t.Fatal("same seed, different sizes")
			}
			differ = differ || a.Size(0, i) != c.Size(0, i)
		}
		if !differ {
			t.Fatal("another seed gave the same sizes")
		}
	})
}

func deflateRatio(t *testing.T, b []byte) float64 {
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, flate.DefaultCompression)
	w.Write(b)
	w.Close()
	return float64(len(b)) / float64(out.Len())
}

// Random content does not compress; compressible content compresses near its stated ratio.
func TestPayloadContent(t *testing.T) {
	cases := []struct {
		p      scenarios.Payload
		lo, hi float64
	}{
		{scenarios.Payload{Content: "random"}, 0.95, 1.05},
		{scenarios.Payload{Content: "compressible", Ratio: 2}, 1.6, 2.4},
		{scenarios.Payload{Content: "compressible", Ratio: 4}, 3.2, 4.8},
		{scenarios.Payload{Content: "compressible", Ratio: 8}, 6.4, 9.6},
	}
	for _, c := range cases {
		buf := make([]byte, 64<<10)
		fillContent(buf, c.p, 3, 1)
		if r := deflateRatio(t, buf); r < c.lo || r > c.hi {
			t.Fatalf("%+v: deflate ratio %.2f, want %.1f to %.1f", c.p, r, c.lo, c.hi)
		}
	}
}
