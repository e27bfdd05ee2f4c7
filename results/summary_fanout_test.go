package results

import (
	"strings"
	"testing"
)

// The delivery line is per receiving group when there are several (fan-out): 16,000
// deliveries/s to four subscribers read as 4,000 msg/s to each, never as 16,000 msg/s delivered.
func TestSummaryFanOutLine(t *testing.T) {
	cases := []struct {
		name      string
		s         Summary
		want, not string
	}{
		{"pub/sub, four subscribers", Summary{Groups: 4, DeliverRate: 16000, DeliverRatePerGroup: 4000, DeliverBytesRate: 16000 * 256},
			"delivered 4000 msg/s to each of 4 receiving groups (16000 deliveries/s, ", "delivered 16000 msg/s"},
		{"two consumer groups", Summary{Groups: 2, DeliverRate: 2000, DeliverRatePerGroup: 1000},
			"delivered 1000 msg/s to each of 2 receiving groups (2000 deliveries/s, ", "delivered 2000 msg/s"},
		{"one group", Summary{Groups: 1, DeliverRate: 1000, DeliverRatePerGroup: 1000},
			"delivered 1000 msg/s (", "receiving groups"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteSummary(&b, &Result{Summary: c.s}); err != nil {
				t.Fatal(err)
			}
			if out := b.String(); !strings.Contains(out, c.want) || strings.Contains(out, c.not) {
				t.Errorf("summary lacks %q or has %q:\n%s", c.want, c.not, out)
			}
		})
	}
}
