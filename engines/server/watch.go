package server

import (
	"qbench/engines/server/resp"
)

// WATCH: a client watching keys has its next EXEC fail (null reply) if any of them was
// modified meanwhile. Handlers call touch where Redis calls signalModifiedKey.

// touch marks key as modified for clients watching it. Store lock held.
func (c *client) touch(key []byte) { c.s.touch(c.db, key) }

func (s *Server) touch(db int, key []byte) {
	// Every modification may be a deletion or an overwrite: a blocked XREADGROUP checks its
	// key after the command (only if the key is no longer a stream does it act).
	if len(s.blocked.byKey) > 0 {
		s.signalDeleted(db, string(key))
	}
	if len(s.watchers) == 0 {
		return
	}
	for _, w := range s.watchers[dbKey{db, string(key)}] {
		w.dirtyCAS = true
	}
}

// touchAllInDB marks every watched key that exists in db (FLUSHDB, FLUSHALL).
func (s *Server) touchAllInDB(db int) {
	for dk, ws := range s.watchers {
		if dk.db != db || s.store.DBs[db].Get(dk.key) == nil {
			continue
		}
		for _, w := range ws {
			w.dirtyCAS = true
		}
	}
}

func (c *client) unwatchAll() {
	s := c.s
	for _, dk := range c.watched {
		ws := s.watchers[dk]
		for i, w := range ws {
			if w == c {
				ws = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(ws) == 0 {
			delete(s.watchers, dk)
		} else {
			s.watchers[dk] = ws
		}
	}
	c.watched = nil
	c.dirtyCAS = false
}

func cmdWatch(c *client, args [][]byte) (any, error) {
	if c.inMulti {
		return nil, errWatchInMulti
	}
	for _, k := range args[1:] {
		dk := dbKey{c.db, string(k)}
		already := false
		for _, x := range c.watched {
			if x == dk {
				already = true
				break
			}
		}
		if already {
			continue
		}
		c.watched = append(c.watched, dk)
		c.s.watchers[dk] = append(c.s.watchers[dk], c)
	}
	return resp.OK, nil
}

func cmdUnwatch(c *client, args [][]byte) (any, error) {
	c.unwatchAll()
	return resp.OK, nil
}
