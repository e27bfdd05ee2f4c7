package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
)

// intTicks label a count or rate axis in whole numbers: "1500", never "1500.0" or "1.5e+03";
// a tick between whole numbers (a small range's 0.5) stays as an unlabelled minor tick.
type intTicks struct{}

func (intTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label == "" {
			continue
		}
		if v := ts[i].Value; math.Abs(v-math.Round(v)) > 1e-9 {
			ts[i].Label = ""
		} else {
			ts[i].Label = fmt.Sprintf("%.0f", v)
		}
	}
	return ts
}
