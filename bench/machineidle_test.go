package bench

import (
	"os"
	"runtime"
	"testing"
)

func TestIdleFigures(t *testing.T) {
	le := func(v int32) []byte {
		u := uint32(v)
		return []byte{byte(u), byte(u >> 8), byte(u >> 16), byte(u >> 24)}
	}
	for _, tc := range []struct {
		name, driver string
		qos          []byte
		nilOut       bool
		limit        int64
		halts        bool
	}{
		{name: "nothing known", nilOut: true},
		{name: "haltpoll, no limit", driver: "haltpoll\n", qos: le(noLatencyLimit), limit: noLatencyLimit, halts: true},
		{name: "haltpoll, limit 0", driver: "haltpoll\n", qos: le(0), limit: 0, halts: false},
		{name: "intel_idle, limit 10", driver: "intel_idle", qos: le(10), limit: 10, halts: true},
		{name: "unreadable limit", driver: "acpi_idle", qos: nil, limit: -1, halts: true},
		{name: "short read", driver: "acpi_idle", qos: []byte{0}, limit: -1, halts: true},
		{name: "no cpuidle driver", driver: "none", qos: le(noLatencyLimit), limit: noLatencyLimit, halts: false},
		{name: "limit only", qos: le(0), limit: 0, halts: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := idleFigures(tc.driver, "menu\n", tc.qos)
			if tc.nilOut {
				if m != nil {
					t.Fatalf("got %+v, want nil", m)
				}
				return
			}
			if m == nil {
				t.Fatal("nil")
			}
			if m.LatencyLimitUs != tc.limit || m.Halts != tc.halts {
				t.Errorf("limit %d halts %v, want %d %v", m.LatencyLimitUs, m.Halts, tc.limit, tc.halts)
			}
			if tc.driver != "" && (m.Governor != "menu" || m.Driver == "" || m.Driver[len(m.Driver)-1] == '\n') {
				t.Errorf("driver %q governor %q: not trimmed", m.Driver, m.Governor)
			}
		})
	}
}

// TestHoldIdlePoll holds the limit and reads it back through readIdle, on a Linux machine where
// this test may write /dev/cpu_dma_latency (root), and is skipped elsewhere.
func TestHoldIdlePoll(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	if f, err := os.OpenFile("/dev/cpu_dma_latency", os.O_WRONLY, 0); err != nil {
		t.Skipf("cannot hold a CPU latency limit here: %v", err)
	} else {
		f.Close()
	}
	release, err := HoldIdlePoll()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := HoldIdlePoll(); err == nil {
		t.Error("a second hold succeeded")
	}
	m := readIdle()
	if m == nil || m.LatencyLimitUs != 0 || !m.PollHeld || m.Halts {
		t.Errorf("while held: %+v, want limit 0, held, not halting", m)
	}
	release()
	release() // twice is harmless
	if m := readIdle(); m == nil || m.PollHeld {
		t.Errorf("after release: %+v, want not held", m)
	}
	again, err := HoldIdlePoll()
	if err != nil {
		t.Fatalf("hold after release: %v", err)
	}
	again()
}
