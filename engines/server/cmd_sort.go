package server

import (
	"bytes"
	"math"
	"sort"
	"strconv"
	"strings"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// SORT and SORT_RO, as Redis 7.0.15's sort.c (sortCommandGeneric): BY (a pattern with '*',
// "->field" for a hash field; a pattern without '*' skips sorting), LIMIT, GET (patterns and
// "#"), ASC/DESC, ALPHA, and STORE into a list, which wakes clients blocked on the
// destination as any list creation does.
var sortCommands = []*command{
	{name: "sort", arity: -2, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Sort the elements in a list, set or sorted set", h: cmdSort(false)},
	{name: "sort_ro", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", h: cmdSort(true)},
}

var errSortScore = redisError("ERR One or more scores can't be converted into double")

// sortItem is redisSortObject: the element, and the score or the BY value it sorts by.
type sortItem struct {
	obj   []byte
	score float64
	cmp   []byte // ALPHA with BY: the BY value (nil: the key is missing)
}

func cmdSort(readonly bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		var (
			desc, alpha, dontsort bool
			limitStart, limitCnt  int64 = 0, -1
			sortby, storekey      []byte
			gets                  [][]byte
		)
		for j := 2; j < len(args); j++ {
			left := len(args) - j - 1
			switch {
			case eq(args[j], "asc"):
				desc = false
			case eq(args[j], "desc"):
				desc = true
			case eq(args[j], "alpha"):
				alpha = true
			case eq(args[j], "limit") && left >= 2:
				s, ok1 := parseInt(args[j+1])
				n, ok2 := parseInt(args[j+2])
				if !ok1 || !ok2 {
					return nil, errNotInteger
				}
				limitStart, limitCnt = s, n
				j += 2
			case !readonly && eq(args[j], "store") && left >= 1:
				storekey = args[j+1]
				j++
			case eq(args[j], "by") && left >= 1:
				sortby = args[j+1]
				dontsort = bytes.IndexByte(sortby, '*') < 0
				j++
			case eq(args[j], "get") && left >= 1:
				gets = append(gets, args[j+1])
				j++
			default:
				return nil, errSyntax
			}
		}
		db := c.keyspace()
		v := db.GetBytes(args[1])
		switch v.(type) {
		case nil, *store.List, *store.Set, *store.Zset:
		default:
			return nil, errWrongType
		}
		if _, isSet := v.(*store.Set); isSet && dontsort && storekey != nil {
			// A set's order is its hash table's: sorted, so the stored result (and the log's
			// replay of it) is deterministic.
			dontsort, alpha, sortby = false, true, nil
		}
		var n int64
		switch x := v.(type) {
		case *store.List:
			n = int64(x.Len())
		case *store.Set:
			n = int64(x.Len())
		case *store.Zset:
			n = int64(x.Len())
		}
		start := max(limitStart, 0)
		end := n - 1
		if limitCnt >= 0 {
			end = start + limitCnt - 1
		}
		if start >= n {
			start, end = n-1, n-2
		}
		end = min(end, n-1)

		var items []sortItem
		add := func(b []byte) { items = append(items, sortItem{obj: b}) }
		switch x := v.(type) {
		case *store.List:
			if dontsort {
				// The list's own order (reversed for DESC), the LIMIT range only.
				if end >= start {
					cnt, from := end-start+1, start
					if desc {
						from = n - 1 - start
					}
					x.Each(int(from), desc, func(_ int, e []byte) bool {
						add(clone(e))
						cnt--
						return cnt > 0
					})
				}
				end, start = end-start, 0
			} else {
				x.Each(0, false, func(_ int, e []byte) bool {
					add(clone(e))
					return true
				})
			}
		case *store.Set:
			for _, m := range x.Members() {
				add(m)
			}
		case *store.Zset:
			if dontsort {
				if end >= start {
					for _, e := range x.Entries(int(start), int(end), desc) {
						add(clone(e.Member))
					}
				}
				end, start = end-start, 0
			} else {
				for _, e := range x.Entries(0, x.Len()-1, false) {
					add(clone(e.Member))
				}
			}
		}

		convErr := false
		if !dontsort {
			for i := range items {
				by := items[i].obj
				if sortby != nil {
					var ok bool
					if by, ok = c.sortLookup(sortby, items[i].obj); !ok {
						continue
					}
				}
				if alpha {
					if sortby != nil {
						items[i].cmp = by
					}
				} else if f, ok := sortScore(by); ok {
					items[i].score = f
				} else {
					convErr = true
				}
			}
			sort.SliceStable(items, func(i, j int) bool {
				return sortCompare(&items[i], &items[j], alpha, sortby != nil, desc) < 0
			})
		}
		outLen := end - start + 1
		if len(gets) > 0 {
			outLen *= int64(len(gets))
		}
		if convErr {
			return nil, errSortScore
		}
		if storekey == nil {
			out := make(resp.Array, 0, max(outLen, 0))
			for j := start; j <= end; j++ {
				if len(gets) == 0 {
					out = append(out, items[j].obj)
				}
				for _, g := range gets {
					if val, ok := c.sortLookup(g, items[j].obj); ok {
						out = append(out, val)
					} else {
						out = append(out, nil)
					}
				}
			}
			return out, nil
		}
		l := store.NewList(c.s.conf.listMaxListpackSize)
		for j := start; j <= end; j++ {
			if len(gets) == 0 {
				l.PushRight(items[j].obj)
			}
			for _, g := range gets {
				val, _ := c.sortLookup(g, items[j].obj)
				l.PushRight(val) // a missing one is stored as ""
			}
		}
		if outLen > 0 {
			if db.GetBytes(storekey) == nil {
				db.SetClearTTL(string(storekey), l)
				c.keyAdded(storekey)
			} else {
				db.SetClearTTL(string(storekey), l)
			}
			c.touch(storekey)
			c.s.signalKey(c.db, string(storekey))
			c.notify(notifyList, "sortstore", storekey)
		} else if db.Delete(string(storekey)) {
			c.touch(storekey)
			c.s.signalDeleted(c.db, string(storekey))
			c.notify(notifyGeneric, "del", storekey)
		}
		return max(outLen, 0), nil
	}
}

// sortCompare is Redis's sortCompare: scores, ties broken by the elements' bytes; ALPHA by
// the BY values (a missing one first) or the elements themselves.
func sortCompare(a, b *sortItem, alpha, byPattern, desc bool) int {
	var cmp int
	switch {
	case !alpha:
		switch {
		case a.score > b.score:
			cmp = 1
		case a.score < b.score:
			cmp = -1
		default:
			cmp = bytes.Compare(a.obj, b.obj)
		}
	case byPattern:
		switch {
		case a.cmp == nil && b.cmp == nil:
			cmp = 0
		case a.cmp == nil:
			cmp = -1
		case b.cmp == nil:
			cmp = 1
		default:
			cmp = bytes.Compare(a.cmp, b.cmp)
		}
	default:
		cmp = bytes.Compare(a.obj, b.obj)
	}
	if desc {
		return -cmp
	}
	return cmp
}

// sortScore parses a value as strtod does for SORT: the whole of it (after leading spaces),
// not NaN, not out of range; "" reads as 0.
func sortScore(b []byte) (float64, bool) {
	s := strings.TrimLeft(string(b), " \t\n\v\f\r")
	if len(b) == 0 {
		return 0, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || strings.ContainsRune(s, '_') {
		return 0, false
	}
	return f, true
}

// sortLookup is lookupKeyByPattern: "#" is the element itself; otherwise the first '*' of
// pattern is replaced by the element, and the key read as a string or, with "->field" after
// the '*', as a hash's field. ok is false when there is no such value (or no '*').
func (c *client) sortLookup(pattern, elem []byte) ([]byte, bool) {
	if string(pattern) == "#" {
		return elem, true
	}
	p := bytes.IndexByte(pattern, '*')
	if p < 0 {
		return nil, false
	}
	keyPat, field := pattern, []byte(nil)
	if f := bytes.Index(pattern[p+1:], []byte("->")); f >= 0 && p+1+f+2 < len(pattern) {
		keyPat, field = pattern[:p+1+f], pattern[p+1+f+2:]
	}
	key := make([]byte, 0, len(keyPat)+len(elem))
	key = append(append(append(key, keyPat[:p]...), elem...), keyPat[p+1:]...)
	v := c.keyspace().GetBytes(key)
	if field != nil {
		h, ok := v.(*store.Hash)
		if !ok {
			return nil, false
		}
		val, ok := h.Get(field)
		return clone(val), ok
	}
	sv, ok := v.(*store.String)
	if !ok {
		return nil, false
	}
	return clone(sv.B), true
}
