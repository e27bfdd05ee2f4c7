package plots

import (
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// legendGap is the space left between the plot area and a legend drawn outside it.
const legendGap = vg.Length(8)

// fitLegendLabel shortens a run's label that would not fit in the legend column outside the
// plot (at most a third of the chart's width, drawLegendOutside), cutting its middle: labels of
// one matrix differ at the end (the axis values) and files at both ends. Cut off at the
// canvas's edge instead, two long labels could read the same.
func fitLegendLabel(p *plot.Plot, label string) string {
	sty := p.Legend.TextStyle
	room := Width/3 - legendGap - p.Legend.ThumbnailWidth - sty.Rectangle(" ").Max.X
	// A flagged run's mark is never the part cut.
	if head, ok := strings.CutSuffix(label, " "+FlagMark); ok {
		mark := " " + FlagMark
		return fitText(sty, head, room-sty.Rectangle(mark).Max.X) + mark
	}
	return fitText(sty, label, room)
}

// fitText shortens label in its middle until it is at most room wide in sty.
func fitText(sty text.Style, label string, room vg.Length) string {
	if sty.Rectangle(label).Max.X <= room {
		return label
	}
	r := []rune(label)
	for keep := len(r) - 1; keep > 1; keep-- {
		head := (keep + 1) / 2
		s := string(r[:head]) + "…" + string(r[len(r)-(keep-head):])
		if sty.Rectangle(s).Max.X <= room {
			return s
		}
	}
	return "…"
}
