package bench

import (
	"math"
	"qbench/scenarios"
	"sort"
)

// mix is splitmix64 over (seed, producer, i): a counter-based generator, so a draw depends only
// on its key and any one is found without replaying the others.
func mix(seed, producer, i uint64) uint64 {
	z := seed*0x9E3779B97F4A7C15 ^ producer*0xD1B54A32D192ED03 ^ i*0xBF58476D1CE4E5B9
	z += 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// unit maps a draw to (0, 1).
func unit(z uint64) float64 { return (float64(z>>11) + 0.5) / (1 << 53) }

// Salts keep the size draws independent of the arrival draws made from the same seed.
const (
	saltSize  = 0x5A17E5
	saltSize2 = 0x5A17E6
	saltBytes = 0xB47E5
)

// Sizer draws message sizes from the scenario's message_size, keyed by (seed, producer, seq).
type Sizer struct {
	z        scenarios.Size
	seed     uint64
	cum      []float64 // a weighted list's cumulative weights, normalised to end at 1
	lo, hi   int
	fixed    bool
	largest_ int
}

// NewSizer prepares the draws for a scenario's sizes and seed.
func NewSizer(z scenarios.Size, seed int64) *Sizer {
	s := &Sizer{z: z, seed: uint64(seed), fixed: z.IsFixed(), lo: max(z.Smallest(), StampSize), hi: z.Largest(), largest_: z.Largest()}
	if z.Dist == "weighted" {
		var total float64
		for _, w := range z.Sizes {
			total += w.Weight
			s.cum = append(s.cum, total)
		}
		for i := range s.cum {
			s.cum[i] /= total
		}
	}
	return s
}

// Largest is the largest size Size can return.
func (s *Sizer) Largest() int { return s.largest_ }

// Size is message seq of producer p's size in bytes.
func (s *Sizer) Size(p uint32, seq uint64) int {
	if s.fixed {
		return s.z.Value
	}
	u := unit(mix(s.seed^saltSize, uint64(p), seq))
	switch s.z.Dist {
	case "uniform":
		return s.lo + int(u*float64(s.hi-s.lo+1))
	case "lognormal":
		// Box-Muller from two independent draws.
		v := unit(mix(s.seed^saltSize2, uint64(p), seq))
		n := math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
		x := int(math.Round(float64(s.z.Median) * math.Exp(s.z.Sigma*n)))
		return min(max(x, s.lo), s.hi)
	case "weighted":
		i := sort.SearchFloat64s(s.cum, u)
		return s.z.Sizes[min(i, len(s.z.Sizes)-1)].Size
	}
	return s.z.Value
}

// fillContent writes the payload content after the stamp: random bytes (incompressible), or
// compressible ones: of every 64 bytes, 64/ratio are random and the rest one repeated byte, so a
// general-purpose compressor gets close to ratio. key makes each buffer's content its own.
func fillContent(buf []byte, p scenarios.Payload, seed int64, key uint64) {
	keep := 64
	if p.Content == "compressible" && p.Ratio > 1 {
		keep = max(1, int(math.Round(64/p.Ratio)))
	}
	var z uint64
	for i := StampSize; i < len(buf); i++ {
		j := (i - StampSize) % 64
		if j >= keep {
			buf[i] = 'x'
			continue
		}
		if j%8 == 0 {
			z = mix(uint64(seed)^saltBytes, key, uint64(i))
		}
		buf[i] = byte(z >> (8 * (j % 8)))
	}
}
