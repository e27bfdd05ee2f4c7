package bench_test

import (
	"fmt"
	"strings"
	"testing"

	"qbench/results"
)

// The delivery rate is deliveries inside the measured window divided by the window: a consumer
// that keeps up with half the offered rate shows half, not what the drain added afterwards; and
// fan-out is reported per receiving group.
func TestDeliverRateIsDeliveriesInTheWindow(t *testing.T) {
	cases := []struct {
		name, yaml string
		groups     int
		// bounds on the delivery rate per group, msg/s
		minPerGroup, maxPerGroup float64
	}{
		{
			name: "slow consumer", groups: 1,
			// One consumer doing 1 ms of work per message handles at most 1,000 msg/s of the
			// 2,000 offered; the drain after the window must not be counted in the rate.
			yaml: `
engine: embedded
design: stream
producers: 2
consumers: 1
rate: 2000
duration: 2s
drain_timeout: 1s
work: 1ms
redis:
  stream: {count: 10}
`, minPerGroup: 300, maxPerGroup: 1050,
		},
		{
			name: "pubsub fan-out", groups: 4,
			yaml: `
engine: embedded
design: pubsub
producers: 1
consumers: 4
rate: 1000
duration: 2s
warmup: 500ms
`, minPerGroup: 900, maxPerGroup: 1100,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, scenario(t, tc.yaml))
			s := res.Summary
			if s.Groups != tc.groups {
				t.Fatalf("groups %d, want %d", s.Groups, tc.groups)
			}
			if s.DeliverRatePerGroup < tc.minPerGroup || s.DeliverRatePerGroup > tc.maxPerGroup {
				t.Errorf("deliver rate per group %.0f msg/s, want %.0f to %.0f", s.DeliverRatePerGroup, tc.minPerGroup, tc.maxPerGroup)
			}
			if got := s.DeliverRatePerGroup * float64(s.Groups); got < s.DeliverRate*0.999 || got > s.DeliverRate*1.001 {
				t.Errorf("deliver rate %.0f is not %d groups x %.0f", s.DeliverRate, s.Groups, s.DeliverRatePerGroup)
			}
			// The summary's line says the same: per group when every group is owed every message.
			var b strings.Builder
			if err := results.WriteSummary(&b, res); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("delivered %.0f msg/s (", s.DeliverRate)
			if tc.groups > 1 {
				want = fmt.Sprintf("delivered %.0f msg/s to each of %d receiving groups (%.0f deliveries/s, ", s.DeliverRatePerGroup, tc.groups, s.DeliverRate)
			}
			if !strings.Contains(b.String(), want) || (tc.groups == 1) == strings.Contains(b.String(), "receiving groups") {
				t.Errorf("summary lacks %q (or names groups for one):\n%s", want, b.String())
			}
			if s.DrainSeconds < 0 {
				t.Errorf("drain seconds %.3f", s.DrainSeconds)
			}
		})
	}
}
