package bench_test

import (
	"testing"

	"qbench/results"
)

// A run on a real redis-server carries the server's health every second: the INFO counters the
// monitoring table names, and a BGSAVE at 1.5 s shows as a fork (total_forks up by one, the fork's
// cost in latest_fork_usec, the save's status ok), so a latency spike can be put beside its cause.
func TestRedisHealthIsSampledEverySecond(t *testing.T) {
	needTarget(t, "redis")
	res := run(t, scenario(t, `
engine: redis
policy: aof-always
rate: 1000
duration: 3s
faults:
  - {at: 1500ms, kind: command, command: [BGSAVE]}
`))
	with := 0
	for _, iv := range res.Series {
		if iv.Health != nil && len(iv.Health.Counters) > 0 {
			with++
		}
	}
	if with < 2 {
		t.Fatalf("%d of %d seconds carry the engine's health, want every full second", with, len(res.Series))
	}
	rows, events := results.HealthSummary(res)
	by := map[string]results.HealthRow{}
	for _, r := range rows {
		by[r.Name] = r
	}
	for _, name := range []string{"aof_delayed_fsync", "evicted_keys", "rejected_connections", "used_memory", "maxmemory", "mem_clients_normal"} {
		if by[name].Readings == 0 {
			t.Errorf("counter %s never read", name)
		}
	}
	if by["total_forks"].Delta < 1 || by["latest_fork_usec"].Max <= 0 {
		t.Errorf("the BGSAVE's fork does not show: total_forks %+v, latest_fork_usec %+v", by["total_forks"], by["latest_fork_usec"])
	}
	if st := by["rdb_last_bgsave_status"].StatusesSeen; len(st) == 0 || st[len(st)-1] != "ok" {
		t.Errorf("rdb_last_bgsave_status seen %v, want ok", st)
	}
	if by["used_memory"].Max <= 0 {
		t.Errorf("used_memory %+v", by["used_memory"])
	}
	t.Logf("latency events: %+v", events)
}
