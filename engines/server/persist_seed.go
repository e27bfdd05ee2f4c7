package server

// Seeding from a Redis dump.rdb (Config.SeedRDB): a run can start from data a real Redis saved;
// and SaveRDB, the dataset as a dump.rdb that a real Redis loads.

import (
	"errors"
	"fmt"
	"os"
	"time"

	"qbench/engines/server/fsys"
	"qbench/engines/server/store"
)

// ErrSeed wraps every seed failure, so callers can tell a bad seed file (a usage error) from
// other start-up failures.
var ErrSeed = errors.New("seed RDB file")

// seedLocked loads Config.SeedRDB into the empty dataset, as Redis loads its dump.rdb at start:
// keys whose expiry has passed are dropped, every database is kept. The whole file is decoded
// first, so a refused file leaves the dataset empty. It returns the keys loaded. Store lock held.
func (p *persistence) seedLocked() (int64, error) {
	s := p.s
	path := s.cfg.SeedRDB
	if path == "" {
		return 0, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("%w %s: %v", ErrSeed, path, err)
	}
	st := s.conf
	keys, err := store.ReadRDBFile(data, store.RDBLimits{
		IntsetMax: st.setMaxIntsetEntries, HashMaxEntries: st.hashMaxListpackEntries, HashMaxValue: st.hashMaxListpackValue,
		ZsetMaxEntries: st.zsetMaxListpackEntries, ZsetMaxValue: st.zsetMaxListpackValue,
		NodeMaxEntries: st.streamNodeMaxEntries, NodeMaxBytes: st.streamNodeMaxBytes,
		ListFill: store.ListFillOf(st.listMaxListpackSize)})
	if err != nil {
		return 0, fmt.Errorf("%w %s: %v", ErrSeed, path, err)
	}
	seen := make(map[dbKey]bool, len(keys))
	for _, k := range keys {
		id := dbKey{k.DB, k.Key}
		if seen[id] {
			// Redis refuses such a file too ("Duplicate key found in RDB file").
			return 0, fmt.Errorf("%w %s: duplicate key %q in db %d", ErrSeed, path, k.Key, k.DB)
		}
		seen[id] = true
	}
	now := s.store.NowMs()
	var loaded, expired int64
	for _, k := range keys {
		if k.ExpireAtMs != 0 && k.ExpireAtMs <= now {
			expired++
			continue
		}
		db := s.store.DBs[k.DB]
		db.SetClearTTL(k.Key, s.reencode(k.Value))
		if k.ExpireAtMs != 0 {
			db.Expire(k.Key, k.ExpireAtMs)
		}
		loaded++
	}
	s.logf("DB seeded from RDB file %s: %d keys loaded, %d expired keys dropped", path, loaded, expired)
	return loaded, nil
}

// SaveRDB writes the dataset to path as a Redis 7.0 dump.rdb (store.AppendRDBFile), strings
// LZF-compressed when rdbcompression is yes, as Redis's SAVE writes them; expired keys are left
// out. The file is rendered under the store lock, then written as the snapshots are
// (fsys.WriteFileAtomic: a temporary file, fsync, rename, fsync of the directory).
func (s *Server) SaveRDB(path string) error {
	s.mu.Lock()
	now := s.store.NowMs()
	var keys []store.RDBKey
	for i, db := range s.store.DBs {
		db.Keys(func(key string, v any) bool {
			at, ok := db.ExpireAt(key)
			if ok && at <= now {
				return true
			}
			if !ok {
				at = 0
			}
			keys = append(keys, store.RDBKey{DB: i, Key: key, Value: v, ExpireAtMs: at})
			return true
		})
	}
	data, err := store.AppendRDBFile(nil, keys, time.Now().Unix(), s.conf.rdbCompression)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return fsys.WriteFileAtomic(fsys.OS{}, path, data) // a real file, even under a simulated FS
}
