package server

import "strconv"

// Keyspace notifications (Redis's notify.c): with notify-keyspace-events set, a write publishes
// "__keyspace@<db>__:<key>" with the event name and "__keyevent@<db>__:<event>" with the key,
// for the classes enabled. Handlers call notify where Redis 7.0.15 calls notifyKeyspaceEvent,
// with the same event names and in the same order.

// Event classes, Redis's NOTIFY_* bits.
const (
	notifyKeyspace = 1 << 0  // K
	notifyKeyevent = 1 << 1  // E
	notifyGeneric  = 1 << 2  // g
	notifyString   = 1 << 3  // $
	notifyList     = 1 << 4  // l
	notifySet      = 1 << 5  // s
	notifyHash     = 1 << 6  // h
	notifyZset     = 1 << 7  // z
	notifyExpired  = 1 << 8  // x
	notifyEvicted  = 1 << 9  // e
	notifyStream   = 1 << 10 // t
	notifyKeyMiss  = 1 << 11 // m
	notifyModule   = 1 << 13 // d
	notifyNew      = 1 << 14 // n
	// notifyAll is 'A': every class but key misses and new keys.
	notifyAll = notifyGeneric | notifyString | notifyList | notifySet | notifyHash | notifyZset |
		notifyExpired | notifyEvicted | notifyStream | notifyModule
)

var notifyChars = []struct {
	c    byte
	flag int
}{
	{'g', notifyGeneric}, {'$', notifyString}, {'l', notifyList}, {'s', notifySet}, {'h', notifyHash},
	{'z', notifyZset}, {'x', notifyExpired}, {'e', notifyEvicted}, {'t', notifyStream},
	{'d', notifyModule}, {'n', notifyNew},
}

// notifyFlagsParse is keyspaceEventsStringToFlags.
func notifyFlagsParse(s string) (int, bool) {
	f := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 'A':
			f |= notifyAll
		case 'K':
			f |= notifyKeyspace
		case 'E':
			f |= notifyKeyevent
		case 'm':
			f |= notifyKeyMiss
		default:
			found := false
			for _, nc := range notifyChars {
				if nc.c == c {
					f |= nc.flag
					found = true
				}
			}
			if !found {
				return 0, false
			}
		}
	}
	return f, true
}

// notifyFlagsString is keyspaceEventsFlagsToString, including its quirk: with every class of
// 'A' set, 'n' is not shown.
func notifyFlagsString(f int) string {
	var b []byte
	if f&notifyAll == notifyAll {
		b = append(b, 'A')
	} else {
		for _, nc := range notifyChars {
			if f&nc.flag != 0 {
				b = append(b, nc.c)
			}
		}
	}
	if f&notifyKeyspace != 0 {
		b = append(b, 'K')
	}
	if f&notifyKeyevent != 0 {
		b = append(b, 'E')
	}
	if f&notifyKeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}

// notify publishes an event of class typ about key in db, if enabled. Store lock held.
func (s *Server) notify(typ int, event string, key []byte, db int) {
	f := s.conf.notifyFlags
	if f&typ == 0 || f&(notifyKeyspace|notifyKeyevent) == 0 {
		return
	}
	dbs := strconv.Itoa(db)
	if f&notifyKeyspace != 0 {
		s.publish("__keyspace@"+dbs+"__:"+string(key), []byte(event))
	}
	if f&notifyKeyevent != 0 {
		s.publish("__keyevent@"+dbs+"__:"+event, key)
	}
}

// notify is Server.notify in the client's database.
func (c *client) notify(typ int, event string, key []byte) { c.s.notify(typ, event, key, c.db) }

// keyAdded is dbAdd's "new" event (a key that did not exist was added).
func (c *client) keyAdded(key []byte) { c.s.notify(notifyNew, "new", key, c.db) }

// onExpired is called by the store when a key's time to live ends: the "expired" event, and
// clients blocked on the key are checked (a blocked XREADGROUP on a deleted stream is woken).
func (s *Server) onExpired(db int, key string, v any) {
	s.notify(notifyExpired, "expired", []byte(key), db)
	s.signalDeleted(db, key)
}
