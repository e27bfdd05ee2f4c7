package bench_test

import (
	"testing"
	"time"
)

// A backlog that builds and drains within a second (two consumers paused together for 1 s) is
// seen by the engine's lag as well as by the load generator's: lag is read every 100 ms while a
// fault is open, so the engine's maximum is not the few messages a once-a-second reading
// happens to catch (the 6 against 498). The two pauses overlap, and each fault's row
// reports the backlog of its own window: neither reads 0.
func TestLagSampledEvery100msDuringFaults(t *testing.T) {
	res := run(t, scenario(t, `
engine: embedded
design: stream
producers: 1
consumers: 2
rate: 500
duration: 4s
faults:
  - {at: 1500ms, kind: consumer-pause, consumer: 0, duration: 1s}
  - {at: 1500ms, kind: consumer-pause, consumer: 1, duration: 1s}
`))
	if len(res.Faults) != 2 {
		t.Fatalf("fault windows %+v", res.Faults)
	}
	// The pauses (1 s) and the tail after them (1 s) are sampled every 100 ms: about 20
	// readings; a loaded machine may miss some ticks, a once-a-second sampler takes 2.
	start, end := res.Faults[0].StartNs, res.Faults[1].EndNs+int64(time.Second)
	n := 0
	for i, s := range res.LagSamples {
		if i > 0 && s.AtNs < res.LagSamples[i-1].AtNs {
			t.Fatalf("sample %d out of order", i)
		}
		if s.AtNs < start || s.AtNs > end+int64(200*time.Millisecond) {
			t.Errorf("sample at %v outside the faults' windows [%v, %v]", time.Duration(s.AtNs), time.Duration(start), time.Duration(end))
		}
		if s.EngineLag != nil {
			n++
		}
	}
	if n < 10 {
		t.Fatalf("%d sub-second readings with the engine's lag, want at least 10: %+v", n, res.LagSamples)
	}
	peak := max(res.Faults[0].LagPeak, res.Faults[1].LagPeak)
	if peak < 250 { // 500 msg/s for 1 s with nobody reading
		t.Fatalf("lag peaks %d and %d, want about 500", res.Faults[0].LagPeak, res.Faults[1].LagPeak)
	}
	for i, f := range res.Faults {
		if f.LagPeak < peak*9/10 {
			t.Errorf("fault %d (%s on %s): lag peak %d, the overlapping fault's is %d", i, f.Kind, f.Target, f.LagPeak, peak)
		}
		if f.EngineLagPeak < f.LagPeak/2 {
			t.Errorf("fault %d: engine lag peak %d against the generator's %d", i, f.EngineLagPeak, f.LagPeak)
		}
	}
	if s := res.Summary; s.EngineLagMax < peak/2 || s.LagMax < peak {
		t.Errorf("summary lag max %d, engine lag max %d; the faults' peak is %d", s.LagMax, s.EngineLagMax, peak)
	}
	t.Logf("lag peak %d, engine lag max %d (%.0f%%), %d sub-second readings", peak, res.Summary.EngineLagMax, 100*float64(res.Summary.EngineLagMax)/float64(peak), n)
}
