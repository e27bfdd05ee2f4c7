package bench_test

import (
	"fmt"
	"testing"
)

// List consumers that pop redis.list.count at a time deliver every acknowledged message exactly once,
// on every target: with count 100 at a rate where batches fill (closed loop, batches of 64
// against 3 consumers: hundreds of thousands of messages), with count 1 at a rate one message per
// round trip drains in time (10,000 messages popped one at a time by 3 competing consumers; 20,000
// took 6-15 s per cell under -race on CI's loaded machine).
func TestListBatchedPopsExactlyOnce(t *testing.T) {
	// The list: section is the Redis designs' own: the Redis targets only.
	forTargets(t, []string{"list", "reliable-list"}, func(t *testing.T, target, design string) {
		for _, c := range []struct {
			count int
			rate  string
		}{{1, "10000"}, {100, "max"}} {
			t.Run(fmt.Sprintf("count-%d", c.count), func(t *testing.T) {
				res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 2
consumers: 3
rate: %s
batch: 64
duration: 1s
warmup: 0s
drain_timeout: 20s
redis:
  list:
    count: %d
`, target, design, c.rate, c.count)))
				l := res.Summary.Ledger
				if l.Acked == 0 || l.Delivered != l.Acked || l.Lost != 0 || l.Duplicates != 0 || l.Failed != 0 {
					t.Fatalf("ledger %+v: want every acknowledged message delivered once", l)
				}
			})
		}
	})
}

// forTargets runs body as a subtest target/design for each of the Redis targets and designs.
func forTargets(t *testing.T, designs []string, body func(t *testing.T, target, design string)) {
	for _, target := range targets {
		for _, design := range designs {
			t.Run(target+"/"+design, func(t *testing.T) {
				needTarget(t, target)
				body(t, target, design)
			})
		}
	}
}
