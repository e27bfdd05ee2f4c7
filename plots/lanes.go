package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Fault lanes: one row per fault kind between a chart's title and its plot area, sharing the
// plot's time axis. Each fault is an opaque band in its kind's colour in its kind's row, the
// row labelled with the kind at its left; a dashed line in the same colour marks where it began
// (and ended) across the plot. Faults of different kinds at the same time stand in different
// rows instead of blending into a third colour.
type faultLanes struct {
	kinds []string
	bands map[string][]Band
}

// Lane geometry: each row's height, the gap between the lanes and the plot area, and the
// label's size.
const (
	laneHeight = vg.Length(11)
	laneGap    = vg.Length(6)
	laneFont   = vg.Length(7.5)
)

// LaneTrackColour is the empty part of a lane.
var LaneTrackColour = color.RGBA{R: 0xf2, G: 0xf2, B: 0xf2, A: 0xff}

func (l *faultLanes) add(b Band) {
	if l.bands == nil {
		l.bands = map[string][]Band{}
	}
	lane := b.Kind
	if b.Marked { // injected by something else: a lane of its own, named so
		lane += " (marked)"
	}
	if _, ok := l.bands[lane]; !ok {
		l.kinds = append(l.kinds, lane)
	}
	l.bands[lane] = append(l.bands[lane], b)
}

// height is the room the lanes take above the plot area.
func (l *faultLanes) height() vg.Length {
	return laneGap + laneHeight*vg.Length(len(l.kinds))
}

func opaque(c color.NRGBA) color.NRGBA { c.A = 0xff; return c }

func (l *faultLanes) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := p.Legend.TextStyle
	sty.Font.Size = laneFont
	sty.Color = color.RGBA{R: 0x33, G: 0x33, B: 0x33, A: 0xff}
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	clip := func(x vg.Length) vg.Length { return max(c.Min.X, min(c.Max.X, x)) }
	for k, kind := range l.kinds {
		// The first kind's row is the top one, next to the title.
		y1 := c.Max.Y + l.height() - laneHeight*vg.Length(k)
		y0 := y1 - laneHeight + 1.5
		c.FillPolygon(LaneTrackColour, []vg.Point{{X: c.Min.X, Y: y0}, {X: c.Max.X, Y: y0}, {X: c.Max.X, Y: y1}, {X: c.Min.X, Y: y1}})
		col := opaque(FaultKindColour(kind))
		mark := draw.LineStyle{Color: col, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
		for _, b := range l.bands[kind] {
			x0, x1 := trX(b.Start.Seconds()), trX(b.End.Seconds())
			if x1-x0 < minBandWidth {
				x1 = x0 + minBandWidth
			}
			x0, x1 = clip(x0), clip(x1)
			if x1 > x0 {
				c.FillPolygon(col, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			}
			c.StrokeLine2(mark, x0, c.Min.Y, x0, c.Max.Y)
			if !b.Instant && !b.Open {
				c.StrokeLine2(mark, x1, c.Min.Y, x1, c.Max.Y)
			}
		}
		c.FillText(sty, vg.Point{X: c.Min.X + 2, Y: (y0 + y1) / 2}, kind)
	}
}

// DataRange keeps every fault's window on the time axis; Y is left to the data.
func (l *faultLanes) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, bs := range l.bands {
		for _, b := range bs {
			xmin, xmax = math.Min(xmin, b.Start.Seconds()), math.Max(xmax, b.End.Seconds())
		}
	}
	return xmin, xmax, math.Inf(1), math.Inf(-1)
}
