// Package store is the server's data layer: 16 databases of keys holding strings, lists,
// streams, sets, hashes and sorted sets, with expiry, and their DUMP/RESTORE and RDB encodings.
// It has no protocol and no locking: the server serialises all access (Redis is
// single-threaded too), and tests call it directly.
package store

import "time"

// NumDBs is the number of databases (Redis's "databases 16").
const NumDBs = 16

// Store is the whole keyspace.
type Store struct {
	DBs [NumDBs]*DB
	// Now is the clock for expiry and stream IDs; tests replace it.
	Now func() time.Time
	// ExpiredKeys counts keys removed because their time to live passed.
	ExpiredKeys int64
	// OnExpired, if set, is called after a key is removed because its time to live passed
	// (keyspace notifications, blocked clients).
	OnExpired func(db int, key string, v any)
}

// New returns an empty store using the wall clock.
func New() *Store {
	s := &Store{Now: time.Now}
	for i := range s.DBs {
		s.DBs[i] = &DB{store: s, id: i, keys: map[string]any{}, expires: map[string]int64{}}
	}
	return s
}

// NowMs is the store clock in Unix milliseconds.
func (s *Store) NowMs() int64 { return s.Now().UnixMilli() }

// FlushAll empties every database.
func (s *Store) FlushAll() {
	for _, db := range s.DBs {
		db.Flush()
	}
}

// DB is one numbered database. Values are *String, *List, *Stream, *Set, *Hash or *Zset.
type DB struct {
	store   *Store
	id      int
	keys    map[string]any
	expires map[string]int64 // Unix ms
}

// String is a string value; NoInt marks one Redis would not store as an integer
// (INCRBYFLOAT results are embstr even when they read as integers); Raw one Redis keeps
// "raw" whatever its length (APPEND and SETRANGE unshare the value into a raw sds).
type String struct {
	B     []byte
	NoInt bool
	Raw   bool
}

// Get returns the live value at key, or nil. An expired key is deleted on access, as in Redis.
func (db *DB) Get(key string) any {
	v, ok := db.keys[key]
	if !ok {
		return nil
	}
	if at, ok := db.expires[key]; ok && at <= db.store.NowMs() {
		db.expired(key, v)
		return nil
	}
	return v
}

// expired removes key, whose time to live passed.
func (db *DB) expired(key string, v any) {
	delete(db.keys, key)
	delete(db.expires, key)
	db.store.ExpiredKeys++
	if db.store.OnExpired != nil {
		db.store.OnExpired(db.id, key, v)
	}
}

// ID is the database's number.
func (db *DB) ID() int { return db.id }

// GetBytes is Get for a key given as bytes, without allocating a string.
func (db *DB) GetBytes(key []byte) any {
	v, ok := db.keys[string(key)]
	if !ok {
		return nil
	}
	if len(db.expires) > 0 {
		if at, ok := db.expires[string(key)]; ok && at <= db.store.NowMs() {
			db.expired(string(key), v)
			return nil
		}
	}
	return v
}

// Set stores v at key, keeping any expiry.
func (db *DB) Set(key string, v any) { db.keys[key] = v }

// SetClearTTL stores v at key and removes any expiry (as SET does).
func (db *DB) SetClearTTL(key string, v any) {
	db.keys[key] = v
	delete(db.expires, key)
}

// Delete removes key and reports whether it existed (and was live).
func (db *DB) Delete(key string) bool {
	_, ok := db.keys[key]
	if !ok {
		return false
	}
	expired := false
	if at, ok := db.expires[key]; ok && at <= db.store.NowMs() {
		expired = true
	}
	delete(db.keys, key)
	delete(db.expires, key)
	return !expired
}

// Expire sets key's expiry (Unix ms); the key must exist.
func (db *DB) Expire(key string, atMs int64) { db.expires[key] = atMs }

// Persist removes key's expiry and reports whether it had one.
func (db *DB) Persist(key string) bool {
	_, ok := db.expires[key]
	delete(db.expires, key)
	return ok
}

// ExpireAt returns key's expiry in Unix ms and whether it has one.
func (db *DB) ExpireAt(key string) (int64, bool) {
	at, ok := db.expires[key]
	return at, ok
}

// Len is the number of keys, counting those expired but not yet removed (as DBSIZE does).
func (db *DB) Len() int { return len(db.keys) }

// ExpiresLen is the number of keys with an expiry.
func (db *DB) ExpiresLen() int { return len(db.expires) }

// Keys calls fn for every live key until it returns false.
func (db *DB) Keys(fn func(key string, v any) bool) {
	now := db.store.NowMs()
	for k, v := range db.keys {
		if at, ok := db.expires[k]; ok && at <= now {
			continue
		}
		if !fn(k, v) {
			return
		}
	}
}

// ExpireSome is one round of Redis's active expiry: it checks up to sample keys with a time to
// live and deletes the expired ones, returning how many it checked and deleted. Map iteration
// order is random, which gives the sampling.
func (db *DB) ExpireSome(sample int) (checked, deleted int) {
	now := db.store.NowMs()
	for k, at := range db.expires {
		if checked >= sample {
			break
		}
		checked++
		if at <= now {
			db.expired(k, db.keys[k])
			deleted++
		}
	}
	return checked, deleted
}

// Swap exchanges the contents of two databases (SWAPDB).
func (db *DB) Swap(o *DB) {
	db.keys, o.keys = o.keys, db.keys
	db.expires, o.expires = o.expires, db.expires
}

// Flush removes every key.
func (db *DB) Flush() {
	db.keys = map[string]any{}
	db.expires = map[string]int64{}
}

// TypeName is the TYPE of a value.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "none"
	case *String:
		return "string"
	case *List:
		return "list"
	case *Stream:
		return "stream"
	case *Set:
		return "set"
	case *Hash:
		return "hash"
	case *Zset:
		return "zset"
	}
	return "unknown"
}
