package plots

import (
	"image/color"
	"math"
	"sync"
)

// palette has a distinct colour for each of the first 12 runs (Tableau 10, then two more, all
// readable on white).
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0x00, 0x00, 0x80, 0xff}, {0x80, 0x80, 0x00, 0xff},
}

// maxDistinct is how many runs get a colour chosen to stand apart from every earlier one; a
// chart of more runs than that is unreadable anyway, and later runs reuse the sequence.
const maxDistinct = 64

var (
	extendedOnce sync.Once
	extended     []color.RGBA
)

// runColour is run i's colour. After the palette, each next colour is the candidate that looks
// most different from all before it (the largest smallest CIE76 distance in L*a*b*), among
// hues every 7.5 degrees at three saturations and three values, leaving out colours too pale to
// read on white. Spreading hues by the golden angle at one saturation and value, as before,
// gave runs 9 and 38 nearly the same colour (delta E 2.4) and 8 and 24 close ones (5.4).
func runColour(i int) color.Color {
	extendedOnce.Do(func() { extended = extendPalette(palette, maxDistinct) })
	return extended[i%len(extended)]
}

func extendPalette(base []color.RGBA, n int) []color.RGBA {
	out := append([]color.RGBA(nil), base...)
	var cands []color.RGBA
	for h := 0.0; h < 360; h += 7.5 {
		for _, s := range []float64{0.5, 0.75, 1} {
			for _, v := range []float64{0.45, 0.65, 0.85} {
				c := hsv(h, s, v)
				if deltaE(c, color.RGBA{0xff, 0xff, 0xff, 0xff}) >= 40 {
					cands = append(cands, c)
				}
			}
		}
	}
	// nearest[k] is candidate k's distance to the closest colour chosen so far.
	nearest := make([]float64, len(cands))
	for k, c := range cands {
		nearest[k] = math.Inf(1)
		for _, o := range out {
			nearest[k] = math.Min(nearest[k], deltaE(c, o))
		}
	}
	for len(out) < n {
		best := 0
		for k := range cands {
			if nearest[k] > nearest[best] {
				best = k
			}
		}
		c := cands[best]
		out = append(out, c)
		for k := range cands {
			nearest[k] = math.Min(nearest[k], deltaE(cands[k], c))
		}
	}
	return out
}

// deltaE is the CIE76 colour difference: the distance in L*a*b* (D65).
func deltaE(a, b color.RGBA) float64 {
	p, q := toLab(a), toLab(b)
	return math.Sqrt((p[0]-q[0])*(p[0]-q[0]) + (p[1]-q[1])*(p[1]-q[1]) + (p[2]-q[2])*(p[2]-q[2]))
}

func toLab(c color.RGBA) [3]float64 {
	lin := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	r, g, b := lin(c.R), lin(c.G), lin(c.B)
	x := (0.4124*r + 0.3576*g + 0.1805*b) / 0.95047
	y := 0.2126*r + 0.7152*g + 0.0722*b
	z := (0.0193*r + 0.1192*g + 0.9505*b) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

func hsv(h, s, v float64) color.RGBA {
	c := v * s
	hp := h / 60
	x := c * (1 - math.Abs(math.Mod(hp, 2)-1))
	var r, g, b float64
	switch int(hp) {
	case 0:
		r, g = c, x
	case 1:
		r, g = x, c
	case 2:
		g, b = c, x
	case 3:
		g, b = x, c
	case 4:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := v - c
	return color.RGBA{uint8(math.Round((r + m) * 255)), uint8(math.Round((g + m) * 255)), uint8(math.Round((b + m) * 255)), 0xff}
}
