package redisq

import (
	"fmt"
	"strings"

	"qbench/engines/server"
)

// applyPersistence sets one Redis-named persistence setting on the in-repo server's config; the
// directory is the target's own.
func applyPersistence(cfg *server.Config, key, value string) error {
	switch key {
	case "appendonly":
		switch strings.ToLower(value) {
		case "yes":
			cfg.AppendOnly = true
		case "no":
			cfg.AppendOnly = false
		default:
			return fmt.Errorf("appendonly must be yes or no (got %q)", value)
		}
	case "appendfsync":
		switch value {
		case "always", "everysec", "no":
			cfg.AppendFsync = value
		default:
			return fmt.Errorf("appendfsync must be always, everysec or no (got %q)", value)
		}
	case "aof-preallocate": // qbench's own: see server.Config.AOFPreallocate
		switch value {
		case "yes", "no":
			cfg.AOFPreallocate = value
		default:
			return fmt.Errorf("aof-preallocate must be yes or no (got %q)", value)
		}
	case "save":
		cfg.Save = value
	case "stop-writes-on-bgsave-error":
		switch strings.ToLower(value) {
		case "yes", "no":
			cfg.StopWritesOnBgsaveError = strings.ToLower(value)
		default:
			return fmt.Errorf("stop-writes-on-bgsave-error must be yes or no (got %q)", value)
		}
	case "seed-rdb": // scenarios.SeedRDBKey: a Redis dump.rdb the dataset starts from
		cfg.SeedRDB = value
	default:
		return fmt.Errorf("persistence setting %q is not one the in-repo server has (appendonly, appendfsync, aof-preallocate, save, stop-writes-on-bgsave-error, seed-rdb)", key)
	}
	return nil
}

// serverConfigFor builds the in-repo server's config for a scenario's persistence settings.
func serverConfigFor(addr, dir string, persistence map[string]string) (server.Config, error) {
	cfg := server.Config{Addr: addr, Dir: dir}
	for k, v := range persistence {
		if err := applyPersistence(&cfg, k, v); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}
