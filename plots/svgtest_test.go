package plots_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"qbench/plots"
)

// What the tests read back from a chart's SVG: gonum writes every line and every filled band
// as a <path> with its colour in the style, in canvas points with y up (0 at the bottom).

type pt struct{ X, Y float64 }

var pathRE = regexp.MustCompile(`<path d="([^"]+)" style="([^"]+)"`)

func pathPoints(d string) []pt {
	var out []pt
	for _, seg := range regexp.MustCompile(`[ML]([-0-9.e]+),([-0-9.e]+)`).FindAllStringSubmatch(d, -1) {
		x, _ := strconv.ParseFloat(seg[1], 64)
		y, _ := strconv.ParseFloat(seg[2], 64)
		out = append(out, pt{x, y})
	}
	return out
}

func hexOf(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// svgLines returns the lines drawn in colour c with more than three points (a legend's sample
// line has two), solid and dashed apart.
func svgLines(svg []byte, c color.Color) (solid, dashed [][]pt) {
	stroke := "stroke:" + hexOf(c)
	for _, m := range pathRE.FindAllStringSubmatch(string(svg), -1) {
		if !strings.Contains(m[2], stroke+";") && !strings.HasSuffix(m[2], stroke) {
			continue
		}
		pts := pathPoints(m[1])
		if len(pts) <= 3 {
			continue
		}
		if strings.Contains(m[2], "dasharray") {
			dashed = append(dashed, pts)
		} else {
			solid = append(solid, pts)
		}
	}
	return solid, dashed
}

// svgBands returns the x extents of the bands filled in c (within 2 of each channel: the SVG
// writes a translucent colour premultiplied and back) that are taller than minHeight (a legend's
// swatch is short), left to right.
func svgBands(svg []byte, c color.NRGBA, minHeight float64) [][2]float64 {
	var out [][2]float64
	for _, m := range pathRE.FindAllStringSubmatch(string(svg), -1) {
		fill, ok := strings.CutPrefix(m[2], "fill:#")
		if !ok || len(fill) < 6 {
			continue
		}
		v, err := strconv.ParseUint(fill[:6], 16, 32)
		if err != nil {
			continue
		}
		near := func(a uint64, b uint8) bool { return int(a)-int(b) <= 2 && int(b)-int(a) <= 2 }
		if !near(v>>16, c.R) || !near(v>>8&0xff, c.G) || !near(v&0xff, c.B) {
			continue
		}
		pts := pathPoints(m[1])
		x0, x1, y0, y1 := 1e9, -1e9, 1e9, -1e9
		for _, p := range pts {
			x0, x1, y0, y1 = min(x0, p.X), max(x1, p.X), min(y0, p.Y), max(y1, p.Y)
		}
		if y1-y0 > minHeight {
			out = append(out, [2]float64{x0, x1})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// plotArea is a chart's data area as the warm-up band (0 s to the warm-up's end, bottom to
// top) shows it: canvas x of 0 s, points per second, and the area's bottom and top.
type plotArea struct{ x0, perSec, bottom, top float64 }

func warmupArea(t *testing.T, svg []byte, warmupSeconds float64) plotArea {
	t.Helper()
	for _, m := range pathRE.FindAllStringSubmatch(string(svg), -1) {
		if !strings.HasPrefix(m[2], "fill:"+hexOf(plots.WarmupColour)) && !strings.HasPrefix(m[2], "fill:#7F7F7F") {
			continue
		}
		pts := pathPoints(m[1])
		x0, x1, y0, y1 := 1e9, -1e9, 1e9, -1e9
		for _, p := range pts {
			x0, x1, y0, y1 = min(x0, p.X), max(x1, p.X), min(y0, p.Y), max(y1, p.Y)
		}
		if y1-y0 > 100 {
			return plotArea{x0: x0, perSec: (x1 - x0) / warmupSeconds, bottom: y0, top: y1}
		}
	}
	t.Fatal("no warm-up band in the SVG")
	return plotArea{}
}

func (a plotArea) seconds(x float64) float64 { return (x - a.x0) / a.perSec }

// height is y as a share of the data area's height (0 at the bottom, the axis's 0).
func (a plotArea) height(y float64) float64 { return (y - a.bottom) / (a.top - a.bottom) }

func medianY(lines [][]pt) float64 {
	var ys []float64
	for _, l := range lines {
		for _, p := range l {
			ys = append(ys, p.Y)
		}
	}
	sort.Float64s(ys)
	if len(ys) == 0 {
		return 0
	}
	return ys[len(ys)/2]
}

func lastPoint(lines [][]pt) pt {
	var last pt
	last.X = -1e9
	for _, l := range lines {
		for _, p := range l {
			if p.X > last.X {
				last = p
			}
		}
	}
	return last
}

// renderSVG renders ch as SVG.
func renderSVG(t *testing.T, ch plots.Chart) []byte {
	t.Helper()
	b, err := plots.Render(ch, "svg")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// renderPNG renders ch as PNG and decodes it.
func renderPNG(t *testing.T, ch plots.Chart) image.Image {
	t.Helper()
	b, err := plots.Render(ch, "png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}
