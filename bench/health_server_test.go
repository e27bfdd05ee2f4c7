package bench_test

import (
	"testing"

	"qbench/results"
)

// The in-repo server reports health as redis-server does: the INFO counters of the monitoring
// table are read every second, on the embedded server (memory only) and on the child-process
// server with its log on (it reports aof_delayed_fsync and the log's write status only then).
func TestInRepoServerHealthIsSampled(t *testing.T) {
	memory := []string{"evicted_keys", "rejected_connections", "used_memory", "maxmemory"}
	for _, c := range []struct {
		target, extra string
		counters      []string
		aof           bool
	}{
		{"embedded", "", memory, false},
		{"server", "policy: aof-always\n", append([]string{"aof_delayed_fsync"}, memory...), true},
	} {
		t.Run(c.target, func(t *testing.T) {
			res := run(t, scenario(t, "engine: "+c.target+"\n"+c.extra+"rate: 500\nduration: 2500ms\n"))
			rows, _ := results.HealthSummary(res)
			by := map[string]results.HealthRow{}
			for _, r := range rows {
				by[r.Name] = r
			}
			for _, name := range c.counters {
				if by[name].Readings < 2 {
					t.Errorf("counter %s read %d times, want every second", name, by[name].Readings)
				}
			}
			if st := by["aof_last_write_status"].StatusesSeen; c.aof && (len(st) == 0 || st[len(st)-1] != "ok") {
				t.Errorf("aof_last_write_status seen %v, want ok", st)
			}
			if by["used_memory"].Max <= 0 {
				t.Errorf("used_memory %+v", by["used_memory"])
			}
		})
	}
}
