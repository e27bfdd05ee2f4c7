package redisq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"qbench/engines"
)

// monitorOn remembers the engines whose latency monitor was switched on (kept here rather than
// in the engine struct, which this file does not own; an entry is a pointer and a bool).
var monitorOn sync.Map

// healthCounters are the INFO fields the seed article's monitoring table names: persistence
// trouble (delayed fsyncs, the last fork's cost), memory against its limit, evictions, refused
// clients, and the clients' output buffers.
var healthCounters = []string{
	"aof_delayed_fsync", "latest_fork_usec", "evicted_keys", "rejected_connections",
	"used_memory", "maxmemory", "mem_clients_normal", "client_recent_max_output_buffer",
	"rdb_changes_since_last_save", "aof_rewrite_in_progress", "rdb_bgsave_in_progress", "total_forks",
}

var healthStatus = []string{"aof_last_write_status", "rdb_last_bgsave_status", "aof_last_bgrewrite_status"}

// Health reads INFO persistence, stats, memory and clients, and LATENCY LATEST
// (engines.HealthReporter). A server that does not know a field or LATENCY (the in-repo server
// lacks some) simply reports fewer. On a redis-server qbench started itself the latency monitor
// is switched on first (latency-monitor-threshold 1 ms; Redis records no event while it is 0).
func (e *engine) Health(ctx context.Context) (engines.Health, error) {
	h := engines.Health{Counters: map[string]int64{}, Status: map[string]string{}}
	if _, done := monitorOn.LoadOrStore(e, true); !done && e.pid != nil {
		_ = e.client.ConfigSet(ctx, "latency-monitor-threshold", "1").Err()
	}
	info, err := e.client.Info(ctx, "persistence", "stats", "memory", "clients").Result()
	if err != nil {
		return h, err
	}
	fields := parseInfo(info)
	for _, k := range healthCounters {
		if v, ok := fields[k]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				h.Counters[k] = n
			}
		}
	}
	for _, k := range healthStatus {
		if v, ok := fields[k]; ok {
			h.Status[k] = v
		}
	}
	if v, err := e.client.Do(ctx, "LATENCY", "LATEST").Result(); err == nil {
		h.Events = latencyEvents(v)
	}
	return h, nil
}

func parseInfo(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			out[k] = v
		}
	}
	return out
}

// latencyEvents reads LATENCY LATEST's reply: an array of [event, timestamp, latest, max]
// (Redis 7 may add a fourth number, the sum; it is ignored).
func latencyEvents(v any) []engines.LatencyEvent {
	rows, ok := v.([]any)
	if !ok {
		return nil
	}
	var out []engines.LatencyEvent
	for _, r := range rows {
		f, ok := r.([]any)
		if !ok || len(f) < 4 {
			continue
		}
		out = append(out, engines.LatencyEvent{Name: fmt.Sprint(f[0]), LatestUnix: toInt(f[1]), LatestMs: toInt(f[2]), MaxMs: toInt(f[3])})
	}
	return out
}

func toInt(v any) int64 {
	switch t := v.(type) {
	case int64:
		return t
	case string:
		n, _ := strconv.ParseInt(t, 10, 64)
		return n
	}
	return 0
}
