package scenarios

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// SeedRDBKey is the persistence setting that starts the server from a Redis dump.rdb (Redis 6.x
// or 7.0: strings, lists, sets, hashes, sorted sets and streams), e.g. a stream already holding a backlog.
// A relative path is the scenario file's directory's.
const SeedRDBKey = "seed-rdb"

// seedEngines are the engines that read SeedRDBKey: the in-repo server as a child process
// (engines/redisq/persistence.go). A managed redis-server would need its own load path (with
// appendonly yes, Redis 7.0 starts empty and ignores a dump.rdb), so it is refused here, not
// passed on as an unknown redis-server option.
var seedEngines = []string{"server"}

func (s *Scenario) seedPath() string {
	p := s.Persistence[SeedRDBKey] // no policy sets it
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	// Absolute: the server target's child runs in a directory of its own.
	if abs, err := filepath.Abs(filepath.Join(s.dir, p)); err == nil {
		return abs
	}
	return filepath.Join(s.dir, p)
}

// validateSeed checks a seed file before the run: it exists, is readable and starts as an RDB
// file does; the whole file is decoded when the server starts.
func (s *Scenario) validateSeed(bad func(field, format string, args ...any)) {
	if s.Persistence[SeedRDBKey] == "" {
		if _, set := s.Persistence[SeedRDBKey]; set {
			bad("persistence."+SeedRDBKey, "must name a dump.rdb file")
		}
		return
	}
	field := "persistence." + SeedRDBKey
	if !s.sweepsEngine() && !slices.Contains(seedEngines, s.Engine) {
		bad(field, "engine %s does not read it (engines that do: %v)", s.Engine, seedEngines)
	}
	path := s.seedPath()
	f, err := os.Open(path)
	if err != nil {
		bad(field, "cannot read the seed file: %v", err)
		return
	}
	defer f.Close()
	head := make([]byte, 5)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, []byte("REDIS")) {
		bad(field, "%s is not an RDB file (it does not start with REDIS)", path)
	}
}
