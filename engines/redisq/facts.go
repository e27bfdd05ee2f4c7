package redisq

import (
	"context"
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
