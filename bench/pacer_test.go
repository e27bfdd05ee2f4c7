package bench

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestPacerSchedule(t *testing.T) {
	ms := time.Millisecond
	p := Pacer{Interval: 10 * ms, Offset: 2 * ms, Duration: 100 * ms}
	cases := []struct {
		name     string
		elapsed  time.Duration
		sent     uint64
		wantDue  uint64
		wantWait time.Duration
		wantStop bool
	}{
		{"before the first message", 0, 0, 0, 2 * ms, false},
		{"exactly at the first", 2 * ms, 0, 1, 0, false},
		{"on time after one", 5 * ms, 1, 0, 7 * ms, false},
		{"behind by a stall of 50ms", 52 * ms, 1, 5, 0, false},
		{"far behind, schedule end caps due", 500 * ms, 3, 7, 0, false},
		{"all sent", 99 * ms, 10, 0, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			due, wait, stop := p.Pace(c.elapsed, c.sent)
			if due != c.wantDue || wait != c.wantWait || stop != c.wantStop {
				t.Fatalf("Pace(%v, %d) = (%d, %v, %v), want (%d, %v, %v)", c.elapsed, c.sent, due, wait, stop, c.wantDue, c.wantWait, c.wantStop)
			}
		})
	}
}

func TestNewPacerSplitsRateEvenly(t *testing.T) {
	// 4 producers at 4,000 msg/s together: each sends every 1 ms, offset by 250 us.
	for p := 0; p < 4; p++ {
		pc := NewPacer(4000, p, 4, time.Second)
		if pc.Interval != time.Millisecond {
			t.Fatalf("interval %v", pc.Interval)
		}
		if want := time.Duration(p) * 250 * time.Microsecond; pc.IntendedAt(0) != want {
			t.Fatalf("producer %d starts at %v, want %v", p, pc.IntendedAt(0), want)
		}
	}
	var total uint64
	for p := 0; p < 4; p++ {
		due, _, _ := NewPacer(4000, p, 4, time.Second).Pace(time.Hour, 0)
		total += due
	}
	if total != 4000 {
		t.Fatalf("one second at 4,000/s schedules %d messages", total)
	}
}

func TestStampRoundTrip(t *testing.T) {
	buf := make([]byte, 64)
	in := Stamp{RunTag: runTag("r1"), Producer: 7, Seq: 1 << 40, IntendedNs: 123456789}
	in.Encode(buf)
	out, err := DecodeStamp(buf)
	if err != nil || out != in {
		t.Fatalf("got %+v %v, want %+v", out, err, in)
	}
	if _, err := DecodeStamp([]byte("not a stamped message at all, no no no")); err == nil {
		t.Fatal("foreign payload accepted")
	}
}

// 3,000 msg/s over 4 producers is not a whole number of ns apart; the schedule must still hold
// exactly rate x duration messages.
func TestPacerExactCount(t *testing.T) {
	for _, c := range []struct {
		rate float64
		n    int
		d    time.Duration
	}{{3000, 4, 8 * time.Second}, {7, 3, time.Second}, {5000, 4, 10 * time.Second}, {1e6, 2, time.Second}} {
		var total uint64
		for p := 0; p < c.n; p++ {
			due, _, _ := NewPacer(c.rate, p, c.n, c.d).Pace(time.Hour, 0)
			total += due
		}
		if want := uint64(c.rate * c.d.Seconds()); total != want {
			t.Errorf("rate %g, %d producers, %v: %d messages, want %d", c.rate, c.n, c.d, total, want)
		}
	}
}

// A rate the scenario loader refuses (too small, not finite) must still not make the schedule's
// arithmetic spin: CountBefore and Pace return at once, and a first Ctrl-C is then seen by the
// producer loop. Before saturation, rate 1e-300 made IntendedAt the most negative Duration and
// CountBefore's galloping search never ended.
func TestPacerSurvivesAbsurdRates(t *testing.T) {
	for _, rate := range []float64{1e-300, 5e-324, math.NaN(), math.Inf(1), 1e300} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			done := make(chan struct{})
			go func() {
				defer close(done)
				for _, poisson := range []bool{false, true} {
					if poisson && rate > 1 {
						continue // a Poisson schedule's gaps are drawn one by one: bounded by MaxRate upstream
					}
					p := NewShapedPacer(rate, nil, poisson, 1, 0, 2, 10*time.Second)
					n := p.CountBefore(5 * time.Second)
					if (rate < 1 || math.IsNaN(rate)) && n > 1 { // message 0 is due at the start
						t.Errorf("rate %g poisson %v: %d messages before 5s", rate, poisson, n)
					}
					p.Pace(5*time.Second, 0)
				}
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("rate %g: the pacer did not return in 10 s", rate)
			}
		})
	}
}
