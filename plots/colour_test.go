package plots_test

import (
	"fmt"
	"image/color"
	"math"
	"testing"

	"qbench/plots"
	"qbench/results/resultstest"
)

// lab is a colour in CIE L*a*b* (D65), where Euclidean distance (CIE76 delta E) approximates
// how different two colours look: about 2.3 is just noticeable, above 10 clearly different.
func lab(c color.Color) [3]float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		x := float64(v) / 0xffff
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	R, G, B := lin(r), lin(g), lin(b)
	X := (0.4124*R + 0.3576*G + 0.1805*B) / 0.95047
	Y := 0.2126*R + 0.7152*G + 0.0722*B
	Z := (0.0193*R + 0.1192*G + 0.9505*B) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	return [3]float64{116*f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))}
}

func deltaE(a, b color.Color) float64 {
	p, q := lab(a), lab(b)
	return math.Sqrt((p[0]-q[0])*(p[0]-q[0]) + (p[1]-q[1])*(p[1]-q[1]) + (p[2]-q[2])*(p[2]-q[2]))
}

// Every run of a large matrix has a colour of its own that reads on white: the first 40 runs
// differ pairwise by a CIE76 delta E of at least 20 (2.3 is just noticeable; the golden-angle
// colours used after the 12th run before gave runs 9 and 38 a delta E of 2.4), and a chart of 16
// runs draws each run's lines in its own colour.
func TestDistinctColoursBeyondTwelveRuns(t *testing.T) {
	const n = 40
	for i := 0; i < n; i++ {
		if d := deltaE(plots.Colour(i), color.White); d < 40 {
			t.Errorf("run %d's colour %s is too pale on white (delta E %.1f)", i, hexOf(plots.Colour(i)), d)
		}
		for j := i + 1; j < n; j++ {
			if d := deltaE(plots.Colour(i), plots.Colour(j)); d < 20 {
				t.Errorf("runs %d and %d: colours %s and %s differ by delta E %.1f only", i, j, hexOf(plots.Colour(i)), hexOf(plots.Colour(j)), d)
			}
		}
	}
	var runs []plots.Run
	for i := 0; i < 16; i++ {
		runs = append(runs, plots.Run{Label: fmt.Sprintf("cell %d", i), Result: resultstest.Make(resultstest.Options{Seed: uint64(i + 1), Seconds: 4, Warmup: 1, Rate: 200 + 50*i})})
	}
	ch, err := plots.Throughput(runs)
	if err != nil {
		t.Fatal(err)
	}
	svg := renderSVG(t, ch)
	for i := range runs {
		if solid, dashed := svgLines(svg, plots.Colour(i)); len(solid) == 0 || len(dashed) == 0 {
			t.Errorf("run %d: %d solid and %d dashed lines in its colour %s", i, len(solid), len(dashed), hexOf(plots.Colour(i)))
		}
	}
}
