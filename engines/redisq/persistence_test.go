package redisq

import (
	"strings"
	"testing"
)

// serverConfigFor maps each Redis-named persistence setting onto the in-repo server's config,
// seed-rdb included, and refuses what the server does not have.
func TestServerConfigFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]string
		ok   func(appendOnly bool, fsync, save, seed string) bool
		err  string
	}{
		{"aof-always", map[string]string{"appendonly": "yes", "appendfsync": "always", "save": ""},
			func(a bool, f, s, _ string) bool { return a && f == "always" && s == "" }, ""},
		{"seed", map[string]string{"seed-rdb": "/data/dump.rdb", "appendonly": "no"},
			func(a bool, _, _, seed string) bool { return !a && seed == "/data/dump.rdb" }, ""},
		{"unknown", map[string]string{"maxmemory": "1mb"}, nil, "appendonly, appendfsync, aof-preallocate, save, stop-writes-on-bgsave-error, seed-rdb"},
		{"bad-prealloc", map[string]string{"aof-preallocate": "maybe"}, nil, "aof-preallocate must be yes or no"},
		{"bad-appendonly", map[string]string{"appendonly": "maybe"}, nil, "appendonly must be yes or no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := serverConfigFor("127.0.0.1:0", "/tmp/x", tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !tc.ok(cfg.AppendOnly, cfg.AppendFsync, cfg.Save, cfg.SeedRDB) {
				t.Fatalf("config %+v, %v", cfg, err)
			}
		})
	}
}
