package main

import (
	"testing"
	"time"

	"qbench/bench"
)

// The progress line counts on the run's own clock: at 9 s of 10 s, 1 s is left (the bar's own
// estimate said 0s at 90%, counting from before the engine's set-up).
func TestProgressText(t *testing.T) {
	for _, c := range []struct {
		p    bench.Progress
		want string
	}{
		{bench.Progress{Elapsed: 9 * time.Second, Duration: 10 * time.Second, Rate: 1000, ProduceP99: 1500 * time.Microsecond, Lag: 3},
			"q 9s of 10s, 1s left: 1000 msg/s, p99 1.50ms, lag 3"},
		{bench.Progress{Elapsed: 1 * time.Second, Duration: 10 * time.Second, Warmup: true, ProduceP99: 6509 * time.Millisecond},
			"q warm-up 1s of 10s, 9s left: 0 msg/s, p99 6.51s, lag 0"},
		{bench.Progress{Elapsed: 12 * time.Second, Duration: 10 * time.Second}, "q 12s of 10s, 0s left: 0 msg/s, p99 -, lag 0"},
	} {
		if got := progressText("q", c.p); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// The bar's percentage is of the elapsed time the text shows: "3s of 3s" is 100%, not 66%.
func TestProgressPercentMatchesItsClock(t *testing.T) {
	for _, c := range []struct {
		elapsed, duration time.Duration
		want              int64
	}{
		{2999 * time.Millisecond, 3 * time.Second, 100},
		{2 * time.Second, 3 * time.Second, 66},
		{5 * time.Second, 10 * time.Second, 50},
		{12 * time.Second, 10 * time.Second, 100},
		{time.Second, 0, 100},
	} {
		p := bench.Progress{Elapsed: c.elapsed, Duration: c.duration}
		if got := progressPercent(p); got != c.want {
			t.Errorf("%v of %v: %d%%, want %d%% (text: %s)", c.elapsed, c.duration, got, c.want, progressText("q", p))
		}
	}
}
