package bench

import (
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"qbench/results"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/proc/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseProcStat(t *testing.T) {
	got, err := parseProcStat(readFixture(t, "stat-start"))
	if err != nil {
		t.Fatal(err)
	}
	// The "cpu " line, not cpu0's; guest (7) is inside user and not kept.
	if want := (cpuStat{1000, 10, 500, 8000, 100, 0, 50, 40, 2}); got != want {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
	if got.busy() != 1560 || got.total() != 9700 {
		t.Fatalf("busy %d total %d", got.busy(), got.total())
	}
	// An old kernel without the steal column reads 0 steal.
	if c, err := parseProcStat([]byte("cpu  1 2 3 4 5 6 7\n")); err != nil || c.steal != 0 || c.softirq != 7 || c.cpus != 1 {
		t.Fatalf("old kernel: %+v %v", c, err)
	}
	for _, bad := range []string{"", "intr 1 2\n", "cpu 1 2\n", "cpu 1 x 3 4 5\n"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseLoadAvg(t *testing.T) {
	got, err := parseLoadAvg(readFixture(t, "loadavg"))
	if err != nil || got != [3]float64{10.44, 4.06, 1.55} {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := parseLoadAvg([]byte("1.0 2.0\n")); err == nil {
		t.Error("two fields parsed")
	}
}

// Over the fixture's 10 s on 2 CPUs (2,000 ticks): 240 ticks of steal (12%), 840 busy (8.4 s),
// of which qbench used 3 s and the engine's server 2 s: other processes 3.4 s, 0.34 cores.
func TestMachineFigures(t *testing.T) {
	c0, _ := parseProcStat(readFixture(t, "stat-start"))
	c1, _ := parseProcStat(readFixture(t, "stat-end"))
	load, _ := parseLoadAvg(readFixture(t, "loadavg"))
	start := machineSample{cpu: c0, load: load, ok: true, loadOK: true}
	end := machineSample{cpu: c1, ok: true}
	wall := 10 * time.Second
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	cases := []struct {
		name                string
		own, engine         time.Duration
		inside              bool
		other, cores, share float64
		includesEngine      bool
	}{
		{"engine's server known", 3 * time.Second, 2 * time.Second, false, 3.4, 0.34, 0.17, false},
		{"engine's server not known", 3 * time.Second, -1, false, 5.4, 0.54, 0.27, true},
		{"engine inside qbench", 3 * time.Second, -1, true, 5.4, 0.54, 0.27, false},
		{"qbench counted above the ticks: 0, not negative", 9 * time.Second, 0, false, 0, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := machineFigures(start, end, wall, c.own, c.engine, c.inside)
			if m == nil {
				t.Fatal("no figures")
			}
			if m.LoadAvg != load || !near(m.MachineSeconds, 20) || !near(m.BusySeconds, 8.4) || !near(m.StealSeconds, 2.4) || !near(m.StealShare, 0.12) || m.WallSeconds != 10 {
				t.Fatalf("%+v", m)
			}
			if !near(m.OtherCPUSeconds, c.other) || !near(m.OtherCores, c.cores) || !near(m.OtherShare, c.share) || m.OtherIncludesEngine != c.includesEngine {
				t.Fatalf("other %v s, %v cores, share %v, includes engine %v; want %v %v %v %v", m.OtherCPUSeconds, m.OtherCores, m.OtherShare, m.OtherIncludesEngine, c.other, c.cores, c.share, c.includesEngine)
			}
		})
	}
	if m := machineFigures(start, machineSample{}, wall, 0, 0, false); m != nil {
		t.Errorf("a failed sample gave %+v", m)
	}
	if m := machineFigures(start, start, wall, 0, 0, false); m != nil {
		t.Errorf("no tick between the samples gave %+v", m)
	}
}

// The machine's counters move: busy and total grow while this process spins.
func TestReadMachineAdvances(t *testing.T) {
	if runtime.GOOS != "linux" {
		if readMachine().ok {
			t.Fatal("a machine sample off Linux")
		}
		t.Skip("no /proc/stat off Linux")
	}
	a := readMachine()
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	b := readMachine()
	if !a.ok || !a.loadOK || !b.ok {
		t.Fatalf("samples %+v %+v", a, b)
	}
	d := b.cpu.sub(a.cpu)
	if d.busy() <= 0 || d.total() < d.busy() || d.steal < 0 {
		t.Fatalf("over 50 ms of spinning: %+v", d)
	}
}

// A forced collection between two samples is one cycle at least, with a pause, and GC CPU.
func TestGCFigures(t *testing.T) {
	a := readGC()
	runtime.GC()
	runtime.GC()
	b := readGC()
	var g results.Generator
	fillGC(&g, a, b, time.Second)
	if g.GCCycles < 2 || g.GCPauseTotalNs <= 0 || g.GCPauseMaxNs <= 0 || g.GCPauseMaxNs > g.GCPauseTotalNs*2 || g.GCCPUSeconds <= 0 || g.GCCPUShare <= 0 || g.GCCPUShare > 1 {
		t.Fatalf("after two collections: %+v", g)
	}
	if !near(g.GCPauseShare, float64(g.GCPauseTotalNs)/1e9, 1e-9) {
		t.Fatalf("pause share %v of 1 s with %d ns paused", g.GCPauseShare, g.GCPauseTotalNs)
	}
	// The histogram's difference: a fixture of two samples with known buckets.
	h0 := gcSample{cycles: 5, pauseBuckets: []float64{math.Inf(-1), 0, 1e-4, 1e-3, math.Inf(1)}, pauseCounts: []uint64{0, 3, 1, 0}, gcCPU: 1, goCPU: 10, ok: true}
	h1 := h0
	h1.cycles, h1.pauseCounts, h1.gcCPU, h1.goCPU = 9, []uint64{0, 5, 4, 1}, 1.5, 20
	g = results.Generator{}
	fillGC(&g, h0, h1, 2*time.Second)
	// 2 pauses at 50 us, 3 at 550 us, 1 in the open bucket counted at 1 ms: 2.75 ms; the
	// longest is known only as at least 1 ms.
	if g.GCCycles != 4 || g.GCPauseTotalNs != 2_750_000 || g.GCPauseMaxNs != 1_000_000 || !near(g.GCPauseShare, 0.001375, 1e-12) || g.GCCPUSeconds != 0.5 || g.GCCPUShare != 0.05 {
		t.Fatalf("from the fixture: %+v", g)
	}
}

func near(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

// What the samples cost: two of each a run, and one machine sample a second.
func BenchmarkReadMachine(b *testing.B) {
	for b.Loop() {
		readMachine()
	}
}

func BenchmarkReadGC(b *testing.B) {
	for b.Loop() {
		readGC()
	}
}
