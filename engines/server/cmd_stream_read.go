package server

// Stream reads: XRANGE/XREVRANGE, and XREAD/XREADGROUP (parse, serve now, or block).

import (
	"math"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

func cmdXrange(rev bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		startArg, endArg := args[2], args[3]
		if rev {
			startArg, endArg = args[3], args[2]
		}
		start, ex, err := parseIntervalID(startArg, 0)
		if err != nil {
			return nil, err
		}
		if ex {
			var ok bool
			if start, ok = start.Incr(); !ok {
				return nil, redisError("ERR invalid start ID for the interval")
			}
		}
		end, ex, err := parseIntervalID(endArg, math.MaxUint64)
		if err != nil {
			return nil, err
		}
		if ex {
			var ok bool
			if end, ok = end.Decr(); !ok {
				return nil, redisError("ERR invalid end ID for the interval")
			}
		}
		count := int64(-1)
		for j := 4; j < len(args); j++ {
			if eq(args[j], "count") && j+1 < len(args) {
				j++
				n, ok := parseInt(args[j])
				if !ok {
					return nil, errNotInteger
				}
				count = max(n, 0)
			} else {
				return nil, errSyntax
			}
		}
		st, err := c.getStream(args[1])
		if err != nil {
			return nil, err
		}
		if st == nil {
			return resp.Array{}, nil
		}
		if count == 0 {
			return resp.NullArray, nil
		}
		if count < 0 {
			count = 0
		}
		out := newEntriesReply(c.proto)
		st.Range(start, end, int(min(count, math.MaxInt32)), rev, func(id store.ID, fv [][]byte) bool {
			out.add(id, fv)
			return true
		})
		return out, nil
	}
}

// xreadArgs is XREAD's and XREADGROUP's parsed arguments.
type xreadArgs struct {
	group, consumer string
	isGroup         bool
	noack           bool
	count           int64
	block           bool
	timeout         int64 // ms
	keys            [][]byte
	ids             []store.ID
	newOnly         []bool // ">" for the group
}

// cmdXread and cmdXreadgroup are XREAD and XREADGROUP: parse, serve what is there now, or block.
func cmdXread(c *client, args [][]byte) (any, error) { return xread(c, args, false) }

func cmdXreadgroup(c *client, args [][]byte) (any, error) { return xread(c, args, true) }

func xread(c *client, args [][]byte, isGroup bool) (any, error) {
	a, err := parseXread(c, args, isGroup)
	if err != nil {
		return nil, err
	}
	if out := a.serveNow(c); len(out) > 0 {
		return streamsReply(c.proto, out), nil
	}
	if !a.block {
		return resp.NullArray, nil
	}
	return a.blockSpec(c), nil
}

// parseXread parses the options, then resolves each stream's ID ("$" to the stream's last ID,
// ">" to new entries only) and checks that the groups exist, in Redis's order of errors.
func parseXread(c *client, args [][]byte, isGroup bool) (*xreadArgs, error) {
	a := &xreadArgs{isGroup: isGroup}
	streamsArg := 0
	groupGiven := false
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		o := args[i]
		switch {
		case eq(o, "block") && more > 0:
			i++
			d, err := parseTimeoutMs(args[i])
			if err != nil {
				return nil, err
			}
			a.block, a.timeout = true, d.Milliseconds()
		case eq(o, "count") && more > 0:
			i++
			n, ok := parseInt(args[i])
			if !ok {
				return nil, errNotInteger
			}
			a.count = max(n, 0)
		case eq(o, "streams") && more > 0:
			streamsArg = i + 1
			n := len(args) - streamsArg
			if n%2 != 0 {
				return nil, errUnbalancedXread // Redis 7.0 says XREAD for XREADGROUP too
			}
			i = len(args)
		case eq(o, "group") && more >= 2:
			if !isGroup {
				return nil, redisError("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
			}
			a.group, a.consumer = string(args[i+1]), string(args[i+2])
			groupGiven = true
			i += 2
		case eq(o, "noack"):
			if !isGroup {
				return nil, redisError("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
			}
			a.noack = true
		default:
			return nil, errSyntax
		}
	}
	if streamsArg == 0 {
		return nil, errSyntax
	}
	if isGroup && !groupGiven {
		return nil, redisError("ERR Missing GROUP option for XREADGROUP")
	}
	n := (len(args) - streamsArg) / 2
	a.keys = args[streamsArg : streamsArg+n]
	a.ids = make([]store.ID, n)
	a.newOnly = make([]bool, n)
	for i := 0; i < n; i++ {
		key := a.keys[i]
		idArg := args[streamsArg+n+i]
		st, err := c.getStream(key)
		if err != nil {
			return nil, err
		}
		if isGroup {
			if st == nil || st.Group(a.group) == nil {
				return nil, errNoGroup(string(key), a.group, "XREADGROUP")
			}
		}
		switch {
		case len(idArg) == 1 && idArg[0] == '$':
			if isGroup {
				return nil, errXreadGroupSpecial
			}
			if st != nil {
				a.ids[i] = st.LastID
			}
			continue
		case len(idArg) == 1 && idArg[0] == '>':
			if !isGroup {
				return nil, errXreadGreaterThan
			}
			a.ids[i] = store.MaxID
			a.newOnly[i] = true
			continue
		}
		id, _, err := parseStreamID(idArg, 0, true, false)
		if err != nil {
			return nil, err
		}
		a.ids[i] = id
	}
	return a, nil
}

// serveNow is xreadCommand's synchronous part: for each stream with something to give, its key
// and entries. A group read of history (an ID other than ">") is always served, even empty.
func (a *xreadArgs) serveNow(c *client) []any {
	var out []any
	for i, key := range a.keys {
		st, _ := c.getStream(key)
		if st == nil {
			continue
		}
		gt := a.ids[i]
		serve, history := false, false
		var g *store.Group
		if a.isGroup {
			g = st.Group(a.group)
			if !a.newOnly[i] {
				serve, history = true, true
			} else if st.Len() > 0 {
				if maxID, ok := st.LastEntryID(); ok && g.LastID.Less(maxID) {
					serve = true
					gt = g.LastID
				}
			}
		} else if st.Len() > 0 {
			if maxID, ok := st.LastEntryID(); ok && gt.Less(maxID) {
				serve = true
			}
		}
		if serve {
			out = append(out, clone(key), a.serve(c, st, key, g, gt, history, a.count))
		}
	}
	return out
}

// blockSpec parks the client on its streams; a write to one of them serves it as
// serveClientsBlockedOnStreamKey does: a group reads past its last-delivered ID, XREAD past the
// ID it asked for, each only if the stream's last ID is beyond it.
func (a *xreadArgs) blockSpec(c *client) *blockSpec {
	keys := make([]string, len(a.keys))
	for i, k := range a.keys {
		keys[i] = string(k)
	}
	ids := append([]store.ID(nil), a.ids...)
	count := a.count
	if count == 0 {
		count = 1000 // XREAD_BLOCKED_DEFAULT_COUNT
	}
	var gone any
	if a.isGroup {
		gone = errStreamGone
	}
	return &blockSpec{
		keys:         keys,
		timeout:      timeDurationMs(a.timeout),
		timeoutReply: resp.NullArray,
		goneReply:    gone,
		serve: func(key string) (any, bool) {
			idx := -1
			for i, k := range keys {
				if k == key {
					idx = i
					break
				}
			}
			st, err := c.getStream([]byte(key))
			if err != nil || st == nil || idx < 0 {
				return nil, false
			}
			gt := ids[idx]
			var g *store.Group
			if a.isGroup {
				g = st.Group(a.group)
				if g == nil {
					return errNoGroupDestroyed, true
				}
				gt = g.LastID
			}
			if !gt.Less(st.LastID) {
				return nil, false
			}
			entries := a.serve(c, st, []byte(key), g, gt, false, count)
			return streamsReply(c.proto, []any{key, entries}), true
		},
	}
}

// serve is one stream's entries after gt, up to count: a group's consumer is created (or
// refreshed) only when it is served, as Redis does, and history comes from its own PEL.
func (a *xreadArgs) serve(c *client, st *store.Stream, key []byte, g *store.Group, gt store.ID, history bool, count int64) *entriesReply {
	var cons *store.Consumer
	if a.isGroup {
		cons = c.createConsumer(g, a.consumer, key)
	}
	start, _ := gt.Incr()
	out := newEntriesReplyRoom(c.proto, len(key)+32) // room for streamsReply's prefix
	if history {
		return c.s.replyFromConsumerPEL(out, st, cons, start, count)
	}
	return c.s.replyWithRange(out, st, start, count, g, cons, a.noack)
}

// streamsReply shapes XREAD's reply: [[key, entries], ...] in RESP2, {key: entries} in RESP3.
// One stream's is its entries with the rest as their prefix: encoded as one buffer, it can
// become the output uncopied (entriesReply.AppendRESP), as XRANGE's does.
func streamsReply(proto int, kv []any) any {
	if e, ok := kv[len(kv)-1].(*entriesReply); ok && len(kv) == 2 {
		if proto >= 3 {
			e.prefix = append(e.prefix, "%1\r\n"...)
		} else {
			e.prefix = resp.AppendArrayLen(resp.AppendArrayLen(e.prefix, 1), 2)
		}
		e.prefix = resp.AppendValue(e.prefix, kv[0], proto)
		return e
	}
	if proto >= 3 {
		return resp.Map(kv)
	}
	out := make(resp.Array, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		out = append(out, resp.Array{kv[i], kv[i+1]})
	}
	return out
}

// replyWithRange is streamReplyWithRange for XREAD(GROUP): entries from start on, advancing
// the group and adding to the PELs unless noack.
func (s *Server) replyWithRange(out *entriesReply, st *store.Stream, start store.ID, count int64, g *store.Group, cons *store.Consumer, noack bool) *entriesReply {
	now := s.store.NowMs()
	st.Range(start, store.MaxID, int(min(count, math.MaxInt32)), false, func(id store.ID, fv [][]byte) bool {
		if g != nil {
			st.Delivered(g, id)
		}
		out.add(id, fv)
		if g != nil && !noack {
			if nk := g.PEL.Get(id); nk != nil {
				nk.Consumer.PEL.Remove(id)
				nk.Consumer = cons
				nk.DeliveryTime = now
				nk.DeliveryCount = 1
				cons.PEL.Add(nk)
			} else {
				cons.PEL.Add(g.PEL.Add(store.Nack{ID: id, DeliveryTime: now, DeliveryCount: 1, Consumer: cons}))
			}
		}
		return true
	})
	return out
}

// replyFromConsumerPEL serves a consumer's own pending history from start on.
func (s *Server) replyFromConsumerPEL(out *entriesReply, st *store.Stream, cons *store.Consumer, start store.ID, count int64) *entriesReply {
	now := s.store.NowMs()
	cons.PEL.Ascend(start, store.MaxID, func(nk *store.Nack) bool {
		if count > 0 && int64(out.n) >= count {
			return false
		}
		// Range rather than Get: the entry is encoded where it lies, not cloned first.
		found := false
		st.Range(nk.ID, nk.ID, 1, false, func(id store.ID, fv [][]byte) bool {
			out.add(id, fv)
			found = true
			return false
		})
		if found {
			nk.DeliveryTime = now
			nk.DeliveryCount++
		} else {
			out.addDeleted(nk.ID)
		}
		return true
	})
	return out
}
