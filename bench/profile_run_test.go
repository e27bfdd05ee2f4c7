package bench_test

import (
	"fmt"
	"math"
	"testing"
)

// A ramp runs on every target: every intended message is sent and delivered, the series carries
// the offered count per interval (rising, and summing to the profile's integral), the summary
// the profile's mean, and the knee of an objective the ramp must cross is found where the
// offered rate crosses it.
func TestRampRunReportsOfferedAndKnee(t *testing.T) {
	for _, target := range []string{"embedded", "redis"} {
		for _, arrival := range []string{"uniform", "poisson"} {
			t.Run(target+"/"+arrival, func(t *testing.T) {
				needTarget(t, target)
				// 500 to 3000 msg/s over 3 s: 5250 messages, mean 1750/s; seconds offer about
				// 917, 1750 and 2583, so achieved throughput first exceeds 1500/s in second 1.
				sc := scenario(t, fmt.Sprintf(`
engine: %s
design: stream
producers: 2
consumers: 2
arrival: %s
profile:
  ramp: {from: 500, to: 3000}
duration: 3s
warmup: 500ms
knee: produce_rate <= 1500
`, target, arrival))
				res := run(t, sc)
				l := res.Summary.Ledger
				if arrival == "uniform" && l.Acked != 5250 {
					t.Fatalf("acked %d, want the ramp's 5250", l.Acked)
				}
				if l.Lost != 0 || l.Duplicates != 0 || l.Acked == 0 {
					t.Fatalf("ledger %+v", l)
				}
				var offered int64
				for i, iv := range res.Series {
					offered += iv.Offered
					if i > 0 && i < 3 && iv.Offered <= res.Series[i-1].Offered {
						t.Fatalf("offered does not rise: %d then %d", res.Series[i-1].Offered, iv.Offered)
					}
				}
				if offered != l.Sent {
					t.Fatalf("offered %d over the series, sent %d", offered, l.Sent)
				}
				// The measured window is 0.5 s to 3 s: 500 + 833 t msg/s there averages 1958.3.
				if math.Abs(res.Summary.OfferedRate-1958.333) > 0.01 {
					t.Fatalf("offered rate %g, want the measured window's mean 1958.3", res.Summary.OfferedRate)
				}
				k := res.Summary.Knee
				if k == nil || !k.Reached || k.AtSeconds < 0.5 || k.AtSeconds > 1.5 || k.OfferedRate < 1300 {
					t.Fatalf("knee %+v, want reached near 1 s at about 1750/s offered", k)
				}
			})
		}
	}
}
