package results

import (
	"strings"
	"testing"
)

func TestFindKnee(t *testing.T) {
	ms := int64(1e6)
	iv := func(start int64, warm bool, offered, acked int64, p99 int64) Interval {
		return Interval{StartNs: start * 1e9, Warmup: warm, Offered: offered, Acked: acked, Produce: Latency{Count: acked, P99: p99}}
	}
	series := []Interval{
		iv(0, true, 1000, 1000, 9*ms), // warm-up: never the knee
		iv(1, false, 2000, 2000, 1*ms),
		iv(2, false, 3000, 3000, 4*ms),
		iv(3, false, 4000, 3500, 7*ms),
		iv(4, false, 5000, 3600, 20*ms),
	}
	cases := []struct {
		objective string
		reached   bool
		at        float64
		offered   float64
	}{
		{"produce.p99 <= 5ms", true, 3, 4000},
		{"produce.p99 <= 1ms", true, 2, 3000},
		{"produce.p99 <= 1s", false, 0, 0},
		{"produce_rate >= 3400", true, 1, 2000},
	}
	for _, c := range cases {
		t.Run(c.objective, func(t *testing.T) {
			k, err := FindKnee(c.objective, series)
			if err != nil {
				t.Fatal(err)
			}
			if k.Reached != c.reached || k.AtSeconds != c.at || k.OfferedRate != c.offered {
				t.Fatalf("knee %+v, want reached %v at %gs offered %g", k, c.reached, c.at, c.offered)
			}
		})
	}
	if _, err := FindKnee("produce.p99 <= +10%", series); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("relative objective: %v", err)
	}
	if _, err := FindKnee("colour == 3", series); err == nil {
		t.Fatal("unknown metric accepted")
	}
}
