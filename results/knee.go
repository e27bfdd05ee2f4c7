package results

import (
	"fmt"
	"time"
)

// Knee is where a run under a rising load first broke its objective, judged second by second.
type Knee struct {
	// Objective is the gate expression each measured interval was held to.
	Objective string `json:"objective"`
	// Reached is false when every measured interval met the objective.
	Reached bool `json:"reached"`
	// AtSeconds is the start of the first violating interval since the run's start.
	AtSeconds float64 `json:"at_seconds,omitempty"`
	// OfferedRate and ProduceRate are that interval's offered and acknowledged messages per second.
	OfferedRate float64 `json:"offered_rate,omitempty"`
	ProduceRate float64 `json:"produce_rate,omitempty"`
	// Value is the metric's value there, in its unit (ns for latencies).
	Value float64 `json:"value,omitempty"`
}

// FindKnee holds each measured interval of series to the objective (an absolute gate such as
// "produce.p99 <= 5ms"; rates are per second of the interval) and reports the first that breaks it.
func FindKnee(objective string, series []Interval) (*Knee, error) {
	g, err := ParseGate(objective)
	if err != nil {
		return nil, err
	}
	if g.Relative {
		return nil, fmt.Errorf("knee %q: needs an absolute bound, not one relative to a baseline", objective)
	}
	k := &Knee{Objective: g.Expr}
	for i, iv := range series {
		if iv.Warmup {
			continue
		}
		secs := time.Second.Seconds()
		if i+1 < len(series) {
			secs = float64(series[i+1].StartNs-iv.StartNs) / 1e9
		}
		if secs <= 0 {
			continue
		}
		s := Summary{
			MeasuredSeconds: secs,
			ProduceRate:     float64(iv.Acked) / secs,
			DeliverRate:     float64(iv.Deliveries) / secs,
			OfferedRate:     float64(iv.Offered) / secs,
			Latency:         map[string]Latency{"produce": iv.Produce, "send_delay": iv.SendDelay, "e2e": iv.E2E},
			Ledger:          Ledger{Failed: iv.Failed},
		}
		if v := g.metric.Value(&s); !holds(v, g.Op, g.Value) {
			k.Reached, k.AtSeconds, k.Value = true, float64(iv.StartNs)/1e9, v
			k.OfferedRate, k.ProduceRate = s.OfferedRate, s.ProduceRate
			return k, nil
		}
	}
	return k, nil
}
