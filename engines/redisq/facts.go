package redisq

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// factSettings are the CONFIG settings an engine's facts record from a Redis server.
var factSettings = []string{"appendonly", "appendfsync", "save", "maxmemory", "maxmemory-policy"}

// FactSettings copies into settings the persistence and memory settings the server's CONFIG GET
// reports, and each of more (a cluster's own).
func FactSettings(ctx context.Context, c redis.Cmdable, settings map[string]string, more ...string) {
	for _, names := range [][]string{factSettings, more} {
		for _, name := range names {
			if v, err := c.ConfigGet(ctx, name).Result(); err == nil {
				if s, ok := v[name]; ok {
					settings[name] = s
				}
			}
		}
	}
}

// InfoField returns the value of field name in an INFO reply ("" when absent).
func InfoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// LogSizeFact is the engine fact holding the size of the server's append-only log now: the
// records it appended, never the zeros a log file is preallocated with. The runner reads it at
// the producers' start and the consumers' stop and reports the growth as what the engine
// appended per message, apart from what the device wrote (/proc write_bytes).
const LogSizeFact = "log_size_bytes"

// LogRewritesFact counts the server's log rewrites (aof_rewrites): a rewrite replaces the log, so
// its size's growth across one is not what was appended.
const LogRewritesFact = "log_rewrites"

// addLogSize sets LogSizeFact from an INFO persistence reply's aof_current_size (redis-server
// and the in-repo server alike: base and incremental files, the data's end), when the log is on.
func addLogSize(info string, stats map[string]int64) {
	if InfoField(info, "aof_enabled") == "0" {
		return
	}
	if v, err := strconv.ParseInt(InfoField(info, "aof_current_size"), 10, 64); err == nil {
		stats[LogSizeFact] = v
	}
	if v, err := strconv.ParseInt(InfoField(info, "aof_rewrites"), 10, 64); err == nil {
		stats[LogRewritesFact] = v
	}
}
