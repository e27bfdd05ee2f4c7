package plots

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"qbench/results"
)

// cellExtras are the lines a grid cell adds below its p99: achieved of offered, unsent, the knee,
// the objective's verdict and, for a flagged cell, FlagMark and its codes.
func cellExtras(c GridCell) string {
	var b strings.Builder
	if c.Achieved != "" {
		b.WriteString("\nacked " + c.Achieved + " of offered")
	}
	if c.Unsent > 0 {
		fmt.Fprintf(&b, "\nunsent %d", c.Unsent)
	}
	if c.Knee != "" && c.Knee != "—" {
		b.WriteString("\nknee " + c.Knee)
	}
	if c.SLO != nil {
		b.WriteString(map[bool]string{true: "\nmeets objective", false: "\nmisses objective"}[*c.SLO])
	}
	if c.Flags != "" {
		b.WriteString("\n" + FlagMark + " " + c.Flags)
	}
	return b.String()
}

// sloPalette colours a grid by its objective: 0 met (green), 1 missed (red).
type sloPalette struct{}

func (sloPalette) Colors() []color.Color {
	return []color.Color{color.RGBA{R: 0x9c, G: 0xd6, B: 0xa4, A: 0xff}, color.RGBA{R: 0xf0, G: 0x9a, B: 0x9a, A: 0xff}}
}

// sloColoured rewrites the grid's values to 0 (met) and 1 (missed) when the cells carry an
// objective's verdict, and says whether it did.
func sloColoured(g grid, rows, cols []string, cells []GridCell, index func([]string, string) int) bool {
	any := false
	for _, c := range cells {
		if c.SLO == nil {
			continue
		}
		r, col := index(rows, c.Row), index(cols, c.Col)
		if r < 0 || col < 0 {
			continue
		}
		any = true
		g.z[r][col] = 0
		if !*c.SLO {
			g.z[r][col] = 1
		}
	}
	return any
}

// hatch marks flagged grid cells: a dashed outline and diagonal hatching over the cell's
// colour, so that a red or green cell whose figure may describe the generator or the machine
// never reads as a plain verdict.
type hatch struct {
	cells [][2]int // col, row
}

func flaggedCells(rows, cols []string, cells []GridCell, index func([]string, string) int) plot.Plotter {
	var h hatch
	for _, c := range cells {
		r, col := index(rows, c.Row), index(cols, c.Col)
		if c.Flags != "" && r >= 0 && col >= 0 {
			h.cells = append(h.cells, [2]int{col, r})
		}
	}
	if len(h.cells) == 0 {
		return nil
	}
	return h
}

// HatchColour is the flagged cells' outline and hatching.
var HatchColour = color.RGBA{R: 0x5c, G: 0x39, B: 0x00, A: 0xff}

func (h hatch) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	line := draw.LineStyle{Color: color.NRGBA{R: 0x5c, G: 0x39, A: 0x70}, Width: vg.Points(0.8)}
	outline := draw.LineStyle{Color: HatchColour, Width: vg.Points(2.5), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	for _, cr := range h.cells {
		x0, x1 := trX(float64(cr[0])-0.5), trX(float64(cr[0])+0.5)
		y0, y1 := trY(float64(cr[1])-0.5), trY(float64(cr[1])+0.5)
		inset := vg.Points(2)
		x0, x1, y0, y1 = x0+inset, x1-inset, y0+inset, y1-inset
		// 45° hatching: lines x - y = k, clipped to the cell.
		const step = 9
		for k := x0 - (y1 - y0); k < x1; k += vg.Points(step) {
			ax, ay := k, y0 // where the line would meet the bottom edge
			if ax < x0 {
				ay += x0 - ax
				ax = x0
			}
			bx, by := k+(y1-y0), y1 // and the top edge
			if bx > x1 {
				by -= bx - x1
				bx = x1
			}
			if ay < by {
				c.StrokeLine2(line, ax, ay, bx, by)
			}
		}
		c.StrokeLines(outline, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
	}
}

// fromIndexCell fills a grid cell from what the index stored of it (its result unread).
func fromIndexCell(ic results.IndexCell, c *GridCell) {
	c.Flags = suspectCodes(ic.Trust)
	c.Unsent = ic.Unsent
	if a := achievedOfOffered(results.Summary{OfferedRate: ic.OfferedRate, ProduceRate: ic.ProduceRate}); a != "—" {
		c.Achieved = a
	}
	c.Knee = kneeText(ic.Knee, ic.KneeRate)
}

// GridsFromRuns draws a matrix's grids (GridsFromIndex) with each cell's verdict and capacity
// figures read from its result (cells[i] is ix.Cells[i]'s; nil draws from the index alone) and,
// given an objective, coloured by it.
func GridsFromRuns(ix *results.Index, cells []*results.Result, slo SLO) ([]Chart, error) {
	return gridsFromIndex(ix, func(i int, c *GridCell) {
		if i >= len(cells) || cells[i] == nil {
			fromIndexCell(ix.Cells[i], c)
			return
		}
		r := cells[i]
		c.Flags = suspectCodes(trustOf(r))
		c.Unsent = r.Summary.Unsent
		if a := achievedOfOffered(r.Summary); a != "—" {
			c.Achieved = a
		}
		c.Knee = kneeText(r.Summary.Knee, results.KneeRate(r))
		if slo.Set() {
			ok, _ := slo.Meets(r)
			c.SLO = &ok
		}
	})
}
