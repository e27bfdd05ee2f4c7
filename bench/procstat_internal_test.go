package bench

import (
	"maps"
	"testing"
)

// The engine's cost over a run is summed across the server processes a crash fault starts: the
// dying process's share up to its last sample, the new one's from zero (its log from the size it
// loaded); a process that changed unseen, or a log rewritten, leaves the figure unknown rather
// than wrong.
func TestProcTrackerSumsAcrossRestarts(t *testing.T) {
	proc := func(pid int, cpu, write, rss, fsyncs, log int64) procSample {
		return procSample{pid: pid, ok: true, cpuNs: cpu, writeB: write, rss: rss, fsyncs: fsyncs, fsyncsOK: true, logB: log, logOK: true}
	}
	for _, tc := range []struct {
		name string
		// events: start, then each crash's pre and post samples (post.pid 0: never came back),
		// then the end sample.
		start      procSample
		crashes    [][2]procSample
		failedPre  *procSample // a crash that did not happen, before the others
		end        procSample
		want       map[string]int64
		wantAbsent []string
	}{
		{name: "one process", start: proc(10, 100, 1000, 5, 2, 500), end: proc(10, 400, 9000, 7, 12, 2500),
			want:       map[string]int64{"proc_cpu_ns": 300, "proc_write_bytes": 8000, "proc_rss_bytes": 7, "engine_fsyncs": 10, "engine_log_bytes": 2000},
			wantAbsent: []string{statRestarts, statCostUnknown, statLogUnknown}},
		{name: "a crash and a restart", start: proc(10, 100, 1000, 5, 2, 500),
			crashes: [][2]procSample{{proc(10, 300, 6000, 9, 8, 1500), proc(11, 20, 0, 3, 0, 1400)}},
			end:     proc(11, 120, 2000, 4, 5, 1900),
			// 200 + 120 ns, 5000 + 2000 bytes written, 6 + 5 fsyncs, 1000 + 500 appended (the
			// power cut's lost 100 bytes were appended, and counted, by the first process).
			want:       map[string]int64{"proc_cpu_ns": 320, "proc_write_bytes": 7000, "proc_rss_bytes": 9, "engine_fsyncs": 11, "engine_log_bytes": 1500, statRestarts: 1},
			wantAbsent: []string{statCostUnknown}},
		{name: "two crashes", start: proc(10, 0, 0, 1, 0, 0),
			crashes: [][2]procSample{{proc(10, 10, 10, 1, 1, 10), proc(11, 0, 0, 1, 0, 10)}, {proc(11, 5, 5, 1, 1, 15), proc(12, 0, 0, 1, 0, 15)}},
			end:     proc(12, 7, 7, 2, 1, 20),
			want:    map[string]int64{"proc_cpu_ns": 22, "proc_write_bytes": 22, "engine_fsyncs": 3, "engine_log_bytes": 20, statRestarts: 2}},
		{name: "never came back", start: proc(10, 100, 0, 5, 0, 0),
			crashes: [][2]procSample{{proc(10, 150, 50, 6, 3, 30), {}}},
			want:    map[string]int64{"proc_cpu_ns": 50, "proc_write_bytes": 50, "engine_fsyncs": 3, "engine_log_bytes": 30, statRestarts: 0}},
		{name: "a crash that failed", start: proc(10, 100, 0, 5, 0, 0), failedPre: ptr(proc(10, 150, 50, 6, 3, 30)),
			end:        proc(10, 200, 60, 6, 4, 40),
			want:       map[string]int64{"proc_cpu_ns": 100, "proc_write_bytes": 60, "engine_fsyncs": 4, "engine_log_bytes": 40},
			wantAbsent: []string{statRestarts, statCostUnknown}},
		{name: "restarted unseen", start: proc(10, 100, 0, 5, 0, 0), end: proc(11, 20, 0, 4, 1, 10),
			want:       map[string]int64{statCostUnknown: 1, "proc_rss_bytes": 4},
			wantAbsent: []string{"proc_cpu_ns", "proc_write_bytes", "engine_fsyncs", "engine_log_bytes"}},
		{name: "log rewritten", start: proc(10, 0, 0, 1, 0, 500), end: func() procSample { s := proc(10, 1, 1, 1, 1, 900); s.logRewrites = 1; return s }(),
			want: map[string]int64{"proc_cpu_ns": 1, statLogUnknown: 1}, wantAbsent: []string{"engine_log_bytes"}},
		{name: "log shrank", start: proc(10, 0, 0, 1, 0, 500), end: proc(10, 1, 1, 1, 1, 100),
			want: map[string]int64{"engine_fsyncs": 1, statLogUnknown: 1}, wantAbsent: []string{"engine_log_bytes"}},
		{name: "in process: counters only", start: procSample{fsyncs: 3, fsyncsOK: true, logB: 10, logOK: true},
			end:        procSample{fsyncs: 9, fsyncsOK: true, logB: 70, logOK: true},
			want:       map[string]int64{"engine_fsyncs": 6, "engine_log_bytes": 60},
			wantAbsent: []string{"proc_cpu_ns", "proc_rss_bytes", "proc_write_bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr procTracker
			tr.start(tc.start)
			if tc.failedPre != nil {
				tr.beforeCrash(*tc.failedPre)
				tr.crashFailed(*tc.failedPre)
			}
			for _, c := range tc.crashes {
				tr.beforeCrash(c[0])
				if c[1].pid != 0 {
					tr.afterRestart(c[1])
				}
			}
			got := tr.stats(tc.end)
			for k, v := range tc.want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s = %d (present %v), want %d; all %v", k, g, ok, v, got)
				}
			}
			for _, k := range tc.wantAbsent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present (%v), want it left out", k, maps.Clone(got))
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
