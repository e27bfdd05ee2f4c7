package plots

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"

	"qbench/results"
)

// GridCell is one cell of a sweep for the persistence-explorer grid.
type GridCell struct {
	Row, Col   string
	P99        int64 // ns
	Lost, Dups int64
	// Spread is the p99's range across the cell's repetitions (0: none), drawn as "range R" as
	// every surface shows it (results: the range, max - min).
	Spread int64
	// The cell's verdict and capacity figures (gridtrust.go): Flags are its suspect codes
	// (empty: trusted), drawn hatched and outlined with the codes written in, never only coloured.
	Flags    string
	Unsent   int64
	Achieved string // acknowledged of offered ("97%"), "" in a closed loop
	Knee     string
	// SLO is nil without an objective, else whether the cell met every one: the cell is then
	// coloured green or red by it instead of by its p99.
	SLO *bool
}

// grid is the heat map's data: log10 of p99 per cell, NaN where a cell did not run.
type grid struct {
	z          [][]float64 // [row][col]
	rows, cols int
}

func (g grid) Dims() (c, r int)   { return g.cols, g.rows }
func (g grid) Z(c, r int) float64 { return g.z[r][c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }

// Grid draws the persistence-explorer grid: one square per combination of two swept fields
// (rows and columns), coloured by one latency kind's p99 (blue fast, red slow, on a log scale)
// and labelled with the p99 and any lost or duplicated messages.
func Grid(title, rowKey, colKey string, rows, cols []string, cells []GridCell) (Chart, error) {
	p := newPlot(title, colKey, rowKey)
	g := grid{rows: len(rows), cols: len(cols), z: make([][]float64, len(rows))}
	for r := range g.z {
		g.z[r] = make([]float64, len(cols))
		for c := range g.z[r] {
			g.z[r][c] = math.NaN()
		}
	}
	index := func(vals []string, v string) int {
		for i, x := range vals {
			if x == v {
				return i
			}
		}
		return -1
	}
	var labels plotter.XYLabels
	for _, c := range cells {
		r, col := index(rows, c.Row), index(cols, c.Col)
		if r < 0 || col < 0 {
			return Chart{}, fmt.Errorf("grid cell %s/%s is not in the axes", c.Row, c.Col)
		}
		if c.P99 > 0 {
			g.z[r][col] = math.Log10(float64(c.P99))
		}
		text := "p99 " + results.FormatNs(c.P99)
		if c.Spread > 0 {
			text += "\nrange " + results.FormatNs(c.Spread)
		}
		if c.Lost > 0 {
			text += fmt.Sprintf("\nlost %d", c.Lost)
		}
		if c.Dups > 0 {
			text += fmt.Sprintf("\ndup %d", c.Dups)
		}
		text += cellExtras(c)
		labels.XYs = append(labels.XYs, plotter.XY{X: float64(col), Y: float64(r)})
		labels.Labels = append(labels.Labels, text)
	}
	cm := moreland.SmoothBlueRed()
	pal := cm.Palette(64)
	bySLO := sloColoured(g, rows, cols, cells, index)
	if bySLO {
		pal = sloPalette{}
	}
	h := plotter.NewHeatMap(g, pal)
	h.NaN = color.RGBA{R: 0xee, G: 0xee, B: 0xee, A: 0xff}
	switch {
	case h.Min > h.Max: // no cell has a p99 (a produce-only matrix's e2e): every cell grey
		h.Min, h.Max = 0, 1
		p.Title.Text += " (no cell has one)"
	case h.Min == h.Max: // one value: any colour will do, but the range must not be empty
		h.Min, h.Max = h.Min-1, h.Max+1
	}
	p.Add(h)
	if bySLO {
		h.Min, h.Max = 0, 1
		p.X.Label.Text = colKey + "   [colour: green met every objective, red missed one; hatched " + FlagMark + ": flagged]"
	} else if h.Max > h.Min && !math.IsInf(h.Min, 0) && !math.IsInf(h.Max, 0) {
		// The colour key: what blue and red stand for.
		p.X.Label.Text = fmt.Sprintf("%s   [colour: p99 on a log scale, blue %s to red %s]", colKey,
			results.FormatNs(int64(math.Pow(10, h.Min))), results.FormatNs(int64(math.Pow(10, h.Max))))
	}
	if len(labels.XYs) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return Chart{}, err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = -0.5, -0.5
		}
		p.Add(l)
	}
	if fl := flaggedCells(rows, cols, cells, index); fl != nil {
		p.Add(fl)
		if !bySLO {
			p.X.Label.Text += "; hatched " + FlagMark + ": flagged"
		}
	}
	p.NominalX(cols...)
	p.NominalY(rows...)
	if p.X.Label.Text == "" {
		p.X.Label.Text = colKey
	}
	p.Y.Label.Text = rowKey
	name := "grid-" + results.Slug(rowKey+"="+colKey)
	return Chart{Name: name, Title: title, Plot: p, W: Width, H: Height}, nil
}

// GridsFromIndex draws a grid per latency kind (produce and e2e) from a matrix sweep's index:
// rows are the first swept field, columns the second (one column when only one field was swept).
// Further fields are folded into the column labels.
// Each cell carries the verdict, unsent and knee the index stored for it.
func GridsFromIndex(ix *results.Index) ([]Chart, error) { return GridsFromRuns(ix, nil, SLO{}) }

// gridsFromIndex is GridsFromIndex with more to say of each cell: fill adds cell i's verdict
// and capacity figures.
func gridsFromIndex(ix *results.Index, fill func(i int, c *GridCell)) ([]Chart, error) {
	if len(ix.Cells) == 0 || len(ix.Cells[0].Params) == 0 {
		return nil, nil
	}
	var rows, cols []string
	seen := map[string]bool{}
	add := func(list *[]string, v string) {
		if !seen[v] {
			seen[v] = true
			*list = append(*list, v)
		}
	}
	rowOf := func(c results.IndexCell) string { return c.Params[0].Value }
	colOf := func(c results.IndexCell) string {
		var vs []string
		for _, p := range c.Params[1:] {
			vs = append(vs, p.Value)
		}
		return strings.Join(vs, ", ")
	}
	for _, c := range ix.Cells {
		add(&rows, "row:"+rowOf(c))
		add(&cols, "col:"+colOf(c))
	}
	for i := range rows {
		rows[i] = strings.TrimPrefix(rows[i], "row:")
	}
	for i := range cols {
		cols[i] = strings.TrimPrefix(cols[i], "col:")
	}
	rowKey := ix.Cells[0].Params[0].Key
	var colKeys []string
	for _, p := range ix.Cells[0].Params[1:] {
		colKeys = append(colKeys, p.Key)
	}
	colKey := strings.Join(colKeys, ", ")
	var out []Chart
	for _, kind := range []string{"produce", "e2e"} {
		var cells []GridCell
		for i, c := range ix.Cells {
			p99, spread := c.ProduceP99, c.ProduceP99Spread
			if kind == "e2e" {
				p99, spread = c.E2EP99, c.E2EP99Spread
			}
			gc := GridCell{Row: rowOf(c), Col: colOf(c), P99: p99, Lost: c.Lost, Dups: c.Duplicates, Spread: spread}
			if fill != nil {
				fill(i, &gc)
			}
			cells = append(cells, gc)
		}
		ch, err := Grid(fmt.Sprintf("%s: %s p99 by %s", ix.Scenario, kind, strings.TrimPrefix(rowKey+" x "+colKey, "")), rowKey, colKey, rows, cols, cells)
		if err != nil {
			return nil, err
		}
		ch.Name = "grid-" + kind
		out = append(out, ch)
	}
	return out, nil
}
