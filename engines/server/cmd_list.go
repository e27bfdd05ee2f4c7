package server

import (
	"bytes"
	"strings"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

var listCommands = []*command{
	{name: "lpush", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Prepend one or multiple elements to a list", h: cmdPush(true, false)},
	{name: "rpush", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Append one or multiple elements to a list", h: cmdPush(false, false)},
	{name: "lpushx", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Prepend an element to a list, only if the list exists", h: cmdPush(true, true)},
	{name: "rpushx", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Append an element to a list, only if the list exists", h: cmdPush(false, true)},
	{name: "lpop", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Remove and get the first elements in a list", h: cmdPop(true)},
	{name: "rpop", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Remove and get the last elements in a list", h: cmdPop(false)},
	{name: "llen", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Get the length of a list", h: cmdLlen},
	{name: "lrange", arity: 4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Get a range of elements from a list", h: cmdLrange},
	{name: "lindex", arity: 3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Get an element from a list by its index", h: cmdLindex},
	{name: "lset", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Set the value of an element in a list by its index", h: cmdLset},
	{name: "linsert", arity: 5, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Insert an element before or after another element in a list", h: cmdLinsert},
	{name: "lrem", arity: 4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Remove elements from a list", h: cmdLrem},
	{name: "ltrim", arity: 4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Trim a list to the specified range", h: cmdLtrim},
	{name: "lpos", arity: -3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "list", summary: "Return the index of matching elements on a list", h: cmdLpos},
	{name: "lmove", arity: 5, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 2, step: 1, group: "list", summary: "Pop an element from a list, push it to another list and return it", h: cmdLmove},
	{name: "rpoplpush", arity: 3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 2, step: 1, group: "list", summary: "Remove the last element in a list, prepend it to another list and return it", h: cmdRpoplpush},
	{name: "blmove", arity: 6, flags: flagWrite | flagDenyOOM | flagNoScript | flagBlocking, firstKey: 1, lastKey: 2, step: 1, group: "list", summary: "Pop an element from a list, push it to another list and return it; or block until one is available", h: cmdBlmove},
	{name: "brpoplpush", arity: 4, flags: flagWrite | flagDenyOOM | flagNoScript | flagBlocking, firstKey: 1, lastKey: 2, step: 1, group: "list", summary: "Pop an element from a list, push it to another list and return it; or block until one is available", h: cmdBrpoplpush},
	{name: "lmpop", arity: -4, flags: flagWrite, group: "list", summary: "Pop elements from a list", h: cmdLmpop},
	{name: "blmpop", arity: -5, flags: flagWrite | flagBlocking, group: "list", summary: "Pop elements from a list, or block until one is available", h: cmdBlmpop},
	{name: "blpop", arity: -3, flags: flagWrite | flagNoScript | flagBlocking, firstKey: 1, lastKey: -2, step: 1, group: "list", summary: "Remove and get the first element in a list, or block until one is available", h: cmdBpop(true)},
	{name: "brpop", arity: -3, flags: flagWrite | flagNoScript | flagBlocking, firstKey: 1, lastKey: -2, step: 1, group: "list", summary: "Remove and get the last element in a list, or block until one is available", h: cmdBpop(false)},
}

func cmdPush(left, onlyExisting bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		l, err := c.getList(args[1])
		if err != nil {
			return nil, err
		}
		if l == nil {
			if onlyExisting {
				return 0, nil
			}
			l = store.NewList(c.s.conf.listMaxListpackSize)
			c.keyspace().Set(string(args[1]), l)
			c.keyAdded(args[1])
		}
		for _, v := range args[2:] {
			if left {
				l.PushLeft(v) // the list copies
			} else {
				l.PushRight(v)
			}
		}
		c.touch(args[1])
		c.s.signalKeyBytes(c.db, args[1])
		c.notify(notifyList, pushEvent(left), args[1])
		return (*listLen)(l), nil
	}
}

// bulkReply replies a bulk string from a buffer the client reuses (c.popBuf); the reply is
// encoded as soon as the handler returns, before the buffer is reused.
type bulkReply []byte

func (b *bulkReply) AppendRESP(dst []byte, _ int) []byte {
	dst = resp.AppendBulk(dst, *b)
	if cap(*b) > 64<<10 {
		*b = nil // do not keep a huge element's buffer for the connection's life
	}
	return dst
}

// listLen replies a list's length without boxing an int (an allocation per push).
type listLen store.List

func (l *listLen) AppendRESP(b []byte, _ int) []byte {
	return resp.AppendInt(b, int64((*store.List)(l).Len()))
}

// popped sends event and removes key if l is now empty (Redis never keeps empty lists).
func (c *client) popped(key []byte, l *store.List, event string) {
	c.touch(key)
	c.notify(notifyList, event, key)
	if l.Len() == 0 {
		c.keyspace().Delete(string(key))
		c.notify(notifyGeneric, "del", key)
	}
}

func pushEvent(left bool) string {
	if left {
		return "lpush"
	}
	return "rpush"
}

func popEvent(left bool) string {
	if left {
		return "lpop"
	}
	return "rpop"
}

func popOne(l *store.List, left bool) []byte {
	if left {
		return l.PopLeft()
	}
	return l.PopRight()
}

func cmdPop(left bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		if len(args) > 3 {
			return nil, errArity(lowerASCII(args[0]))
		}
		hasCount := len(args) == 3
		var count int64
		if hasCount {
			n, ok := parseInt(args[2])
			if !ok || n < 0 {
				return nil, errOutOfRange
			}
			count = n
		}
		l, err := c.getList(args[1])
		if l == nil && err == nil {
			if hasCount {
				return resp.NullArray, nil
			}
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if !hasCount {
			// Into the client's reply scratch, encoded before the next command: no copy on the heap.
			if left {
				c.popBuf, _ = l.AppendPopLeft(c.popBuf[:0])
			} else {
				c.popBuf, _ = l.AppendPopRight(c.popBuf[:0])
			}
			c.popped(args[1], l, popEvent(left))
			return (*bulkReply)(&c.popBuf), nil
		}
		if count == 0 {
			return resp.Array{}, nil
		}
		out := make([][]byte, 0, min(count, int64(l.Len())))
		for i := int64(0); i < count && l.Len() > 0; i++ {
			out = append(out, popOne(l, left))
		}
		c.popped(args[1], l, popEvent(left))
		return out, nil
	}
}

func cmdLlen(c *client, args [][]byte) (any, error) {
	l, err := c.getList(args[1])
	if err != nil || l == nil {
		return 0, err
	}
	return l.Len(), nil
}

func cmdLrange(c *client, args [][]byte) (any, error) {
	l, start, stop, err := c.listRange(args)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return resp.Array{}, nil
	}
	return &listRangeReply{l, start, stop}, nil
}

// listRangeReply is LRANGE's reply, encoded from the list straight into the output buffer
// (room made once for its exact size), as Redis writes it: it used to copy every element into
// a reply array first, and a 4 M-element LRANGE peaked at 622 MB where Redis took 205. Encoded
// under the store lock, right after the handler, like every reply.
type listRangeReply struct {
	l           *store.List
	start, stop int
}

func (r *listRangeReply) AppendRESP(b []byte, _ int) []byte {
	size := 16
	n := r.l.EachInRange(r.start, r.stop, func(e []byte) { size += len(e) + 5 + digits(len(e)) })
	if size > cap(b)-len(b) {
		b = append(getBuf(len(b)+size), b...)
	}
	b = resp.AppendArrayLen(b, n)
	r.l.EachInRange(r.start, r.stop, func(e []byte) { b = resp.AppendBulk(b, e) })
	return b
}

// digits is the length of n in decimal (n >= 0).
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// listRange is LRANGE's and LTRIM's arguments: key start stop, the indexes parsed before the key
// is looked up (Redis's order of errors) and clamped to int.
func (c *client) listRange(args [][]byte) (l *store.List, start, stop int, err error) {
	a, err := intArg(args[2])
	if err != nil {
		return nil, 0, 0, err
	}
	b, err := intArg(args[3])
	if err != nil {
		return nil, 0, 0, err
	}
	l, err = c.getList(args[1])
	return l, clampInt(a), clampInt(b), err
}

// clampInt converts an int64 index to int without wrapping.
func clampInt(n int64) int {
	const lim = 1 << 62
	if n > lim {
		return lim
	}
	if n < -lim {
		return -lim
	}
	return int(n)
}

func cmdLindex(c *client, args [][]byte) (any, error) {
	l, err := c.getList(args[1])
	if err != nil || l == nil {
		return nil, err
	}
	idx, err := intArg(args[2])
	if err != nil {
		return nil, err
	}
	v, ok := l.Index(clampInt(idx))
	if !ok {
		return nil, nil
	}
	return v, nil
}

func cmdLset(c *client, args [][]byte) (any, error) {
	l, err := c.getList(args[1])
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, errNoSuchKey
	}
	idx, err := intArg(args[2])
	if err != nil {
		return nil, err
	}
	i := clampInt(idx)
	if i < 0 {
		i += l.Len()
	}
	if i < 0 || i >= l.Len() {
		return nil, errIndexOutOfRange
	}
	l.SetIndex(i, args[3])
	c.touch(args[1])
	c.notify(notifyList, "lset", args[1])
	return resp.OK, nil
}

func cmdLinsert(c *client, args [][]byte) (any, error) {
	var after bool
	switch {
	case eq(args[2], "after"):
		after = true
	case eq(args[2], "before"):
	default:
		return nil, errSyntax
	}
	l, err := c.getList(args[1])
	if err != nil || l == nil {
		return 0, err
	}
	n := l.Insert(args[3], args[4], after) // in place: only the pivot's chunk changes
	if n < 0 {
		return -1, nil
	}
	c.touch(args[1])
	c.notify(notifyList, "linsert", args[1])
	return (*listLen)(l), nil // the new length, n, without boxing an int
}

func cmdLrem(c *client, args [][]byte) (any, error) {
	count, err := intArg(args[2])
	if err != nil {
		return nil, err
	}
	l, err := c.getList(args[1])
	if err != nil || l == nil {
		return 0, err
	}
	// In place, walking from the end count says and stopping at the last match wanted (as
	// Redis's lremCommand does); count is clamped, as Redis's long reaches no list length.
	removed := l.Remove(args[3], clampInt(count))
	if removed > 0 {
		c.popped(args[1], l, "lrem")
	}
	return removed, nil
}

func cmdLtrim(c *client, args [][]byte) (any, error) {
	l, start, stop, err := c.listRange(args)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return resp.OK, nil
	}
	l.Trim(start, stop)
	c.popped(args[1], l, "ltrim")
	return resp.OK, nil
}

func cmdLpos(c *client, args [][]byte) (any, error) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for i := 3; i < len(args); i++ {
		more := i+1 < len(args)
		switch {
		case eq(args[i], "rank") && more:
			i++
			n, ok := parseInt(args[i])
			if !ok {
				return nil, errNotInteger
			}
			if n == 0 {
				return nil, redisError("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
			}
			if n == -1<<63 {
				return nil, redisError("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
			}
			rank = n
		case (eq(args[i], "count") || eq(args[i], "maxlen")) && more:
			i++
			n, ok := parseInt(args[i])
			if !ok {
				return nil, errNotInteger
			}
			opt := strings.ToUpper(string(args[i-1]))
			if n < 0 {
				return nil, redisError("ERR " + opt + " can't be negative")
			}
			if opt == "COUNT" {
				count = n
			} else {
				maxlen = n
			}
		default:
			return nil, errSyntax
		}
	}
	l, err := c.getList(args[1])
	if err != nil {
		return nil, err
	}
	if l == nil {
		if count != -1 {
			return resp.Array{}, nil
		}
		return nil, nil
	}
	var matches resp.Array
	n := l.Len()
	skip := rank
	if skip < 0 {
		skip = -skip
	}
	skip--
	from := 0
	if rank < 0 {
		from = n - 1
	}
	scanned := int64(0)
	l.Each(from, rank < 0, func(i int, e []byte) bool {
		if maxlen > 0 && scanned >= maxlen {
			return false
		}
		scanned++
		if !bytes.Equal(e, args[2]) {
			return true
		}
		if skip > 0 {
			skip--
			return true
		}
		matches = append(matches, int64(i))
		return !(count == -1 || (count > 0 && int64(len(matches)) >= count))
	})
	if count == -1 {
		if len(matches) == 0 {
			return nil, nil
		}
		return matches[0], nil
	}
	if matches == nil {
		matches = resp.Array{}
	}
	return matches, nil
}

// side parses LEFT or RIGHT.
func side(b []byte) (left bool, err error) {
	switch {
	case eq(b, "left"):
		return true, nil
	case eq(b, "right"):
		return false, nil
	}
	return false, errSyntax
}

// sides parses LMOVE's and BLMOVE's wherefrom and whereto.
func sides(from, to []byte) (fromLeft, toLeft bool, err error) {
	if fromLeft, err = side(from); err != nil {
		return false, false, err
	}
	toLeft, err = side(to)
	return fromLeft, toLeft, err
}

// move pops from src and pushes to dst; nil if src is empty or missing.
func (c *client) move(src, dst []byte, fromLeft, toLeft bool) (any, error) {
	sl, err := c.getList(src)
	if err != nil {
		return nil, err
	}
	if sl == nil {
		return nil, nil
	}
	dl, err := c.getList(dst)
	if err != nil {
		return nil, err
	}
	v := popOne(sl, fromLeft)
	if dl == nil {
		dl = store.NewList(c.s.conf.listMaxListpackSize)
		c.keyspace().Set(string(dst), dl)
		c.keyAdded(dst)
	}
	if toLeft {
		dl.PushLeft(v)
	} else {
		dl.PushRight(v)
	}
	// Redis's order: the push on dst is announced before the pop on src.
	c.touch(dst)
	c.notify(notifyList, pushEvent(toLeft), dst)
	c.popped(src, sl, popEvent(fromLeft))
	c.s.signalKeyBytes(c.db, dst)
	return v, nil
}

func cmdLmove(c *client, args [][]byte) (any, error) {
	from, to, err := sides(args[3], args[4])
	if err != nil {
		return nil, err
	}
	return c.move(args[1], args[2], from, to)
}

func cmdRpoplpush(c *client, args [][]byte) (any, error) {
	return c.move(args[1], args[2], false, true)
}

func (c *client) blockingMove(src, dst []byte, from, to bool, timeoutArg []byte) (any, error) {
	timeout, err := parseTimeoutSeconds(timeoutArg)
	if err != nil {
		return nil, err
	}
	v, err := c.move(src, dst, from, to)
	if err != nil || v != nil {
		return v, err
	}
	srcKey, dstKey := clone(src), clone(dst)
	return &blockSpec{
		keys:         []string{string(src)},
		timeout:      timeout,
		timeoutReply: resp.NullArray,
		serve: func(string) (any, bool) {
			v, err := c.move(srcKey, dstKey, from, to)
			if err != nil {
				return err, true
			}
			return v, v != nil
		},
	}, nil
}

func cmdBlmove(c *client, args [][]byte) (any, error) {
	from, to, err := sides(args[3], args[4])
	if err != nil {
		return nil, err
	}
	return c.blockingMove(args[1], args[2], from, to, args[5])
}

func cmdBrpoplpush(c *client, args [][]byte) (any, error) {
	return c.blockingMove(args[1], args[2], false, true, args[3])
}

// tryPopKeys pops from the first non-empty list among keys. count < 0 pops one element and
// replies [key, element] (BLPOP); otherwise up to count, replying [key, [elements]] (LMPOP).
func (c *client) tryPopKeys(keys [][]byte, left bool, count int64) (any, error) {
	for _, k := range keys {
		l, err := c.getList(k)
		if err != nil {
			return nil, err
		}
		if l == nil || l.Len() == 0 {
			continue
		}
		if count < 0 {
			v := popOne(l, left)
			c.popped(k, l, popEvent(left))
			return resp.Array{clone(k), v}, nil
		}
		out := make([][]byte, 0, min(count, int64(l.Len())))
		for i := int64(0); i < count && l.Len() > 0; i++ {
			out = append(out, popOne(l, left))
		}
		c.popped(k, l, popEvent(left))
		return resp.Array{clone(k), out}, nil
	}
	return nil, nil
}

func (c *client) blockingPop(keys [][]byte, left bool, count int64, timeoutArg []byte) (any, error) {
	ready := func(key []byte) bool {
		l, err := c.getList(key)
		return err == nil && l != nil && l.Len() > 0
	}
	pop := func(keys [][]byte) (any, error) { return c.tryPopKeys(keys, left, count) }
	return c.blockingPopKeys(keys, timeoutArg, ready, pop)
}

func cmdBpop(left bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		return c.blockingPop(args[1:len(args)-1], left, -1, args[len(args)-1])
	}
}

// parseMpop parses "numkeys key... LEFT|RIGHT [COUNT n]" starting at args[i].
func parseMpop(args [][]byte, i int) (keys [][]byte, left bool, count int64, err error) {
	return parseMultiPop(args, i, side)
}

// parseMultiPop parses "numkeys key... WHERE [COUNT n]" starting at args[i], WHERE by where
// (LMPOP's LEFT|RIGHT, ZMPOP's MIN|MAX).
func parseMultiPop(args [][]byte, i int, where func([]byte) (bool, error)) (keys [][]byte, left bool, count int64, err error) {
	numkeys, ok := parseInt(args[i])
	if !ok || numkeys < 1 {
		return nil, false, 0, redisError("ERR numkeys should be greater than 0")
	}
	whereIdx := int64(i) + numkeys + 1
	if whereIdx >= int64(len(args)) {
		return nil, false, 0, errSyntax
	}
	left, err = where(args[whereIdx])
	if err != nil {
		return nil, false, 0, err
	}
	count = -1
	for j := int(whereIdx) + 1; j < len(args); j++ {
		if count == -1 && eq(args[j], "count") && j+1 < len(args) {
			j++
			n, ok := parseInt(args[j])
			if !ok || n < 1 {
				return nil, false, 0, errCountPositive
			}
			count = n
		} else {
			return nil, false, 0, errSyntax
		}
	}
	if count == -1 {
		count = 1
	}
	return args[i+1 : whereIdx], left, count, nil
}

func cmdLmpop(c *client, args [][]byte) (any, error) {
	keys, left, count, err := parseMpop(args, 1)
	if err != nil {
		return nil, err
	}
	v, err := c.tryPopKeys(keys, left, count)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return resp.NullArray, nil
	}
	return v, nil
}

func cmdBlmpop(c *client, args [][]byte) (any, error) {
	if _, err := parseTimeoutSeconds(args[1]); err != nil {
		return nil, err
	}
	keys, left, count, err := parseMpop(args, 2)
	if err != nil {
		return nil, err
	}
	return c.blockingPop(keys, left, count, args[1])
}
