package server

import (
	"math"
	"strconv"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

var streamCommands = []*command{
	{name: "xadd", arity: -5, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Appends a new entry to a stream", h: cmdXadd},
	{name: "xlen", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Return the number of entries in a stream", h: cmdXlen},
	{name: "xrange", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval", h: cmdXrange(false)},
	{name: "xrevrange", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", h: cmdXrange(true)},
	{name: "xdel", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", h: cmdXdel},
	{name: "xtrim", arity: -4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Trims the stream to (approximately if '~' is passed) a certain size", h: cmdXtrim},
	{name: "xread", arity: -4, flags: flagReadonly | flagBlocking, firstKey: 0, lastKey: 0, step: 1, group: "stream", summary: "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", h: cmdXread},
	{name: "xreadgroup", arity: -7, flags: flagWrite | flagBlocking, firstKey: 0, lastKey: 0, step: 1, group: "stream", summary: "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", h: cmdXread},
	{name: "xack", arity: -4, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", h: cmdXack},
	{name: "xpending", arity: -3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", h: cmdXpending},
	{name: "xclaim", arity: -6, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", h: cmdXclaim},
	{name: "xautoclaim", arity: -6, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", h: cmdXautoclaim},
	{name: "xsetid", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "An internal command for replicating stream values", h: cmdXsetid},
	{name: "xgroup", arity: -2, group: "stream", summary: "A container for consumer groups commands", subs: []*command{
		{name: "create", arity: -5, flags: flagWrite | flagDenyOOM, firstKey: 2, lastKey: 2, step: 1, group: "stream", summary: "Create a consumer group.", h: cmdXgroup},
		{name: "setid", arity: -5, flags: flagWrite, firstKey: 2, lastKey: 2, step: 1, group: "stream", summary: "Set a consumer group to an arbitrary last delivered ID value.", h: cmdXgroup},
		{name: "destroy", arity: 4, flags: flagWrite, firstKey: 2, lastKey: 2, step: 1, group: "stream", summary: "Destroy a consumer group.", h: cmdXgroup},
		{name: "createconsumer", arity: 5, flags: flagWrite | flagDenyOOM, firstKey: 2, lastKey: 2, step: 1, group: "stream", summary: "Create a consumer in a consumer group.", h: cmdXgroup},
		{name: "delconsumer", arity: 5, flags: flagWrite, firstKey: 2, lastKey: 2, step: 1, group: "stream", summary: "Delete a consumer from a consumer group.", h: cmdXgroup},
		{name: "help", arity: 2, flags: flagLoading | flagStale, group: "stream", summary: "Show helpful text about the different subcommands", h: cmdXgroupHelp},
	}},
	{name: "xinfo", arity: -2, group: "stream", summary: "A container for stream introspection commands", subs: []*command{
		{name: "stream", arity: -3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, group: "stream", summary: "Get information about a stream", h: cmdXinfoStream},
		{name: "groups", arity: 3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, group: "stream", summary: "List the consumer groups of a stream", h: cmdXinfoGroups},
		{name: "consumers", arity: 4, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, group: "stream", summary: "List the consumers in a consumer group", h: cmdXinfoConsumers},
		{name: "help", arity: 2, flags: flagLoading | flagStale, group: "stream", summary: "Show helpful text about the different subcommands", h: cmdXinfoHelp},
	}},
}

// parseStreamID is Redis's streamGenericParseIDOrReply. strict rejects "-" and "+". With
// allowAutoSeq, "ms-*" is accepted and seqGiven is false.
func parseStreamID(b []byte, missingSeq uint64, strict, allowAutoSeq bool) (id store.ID, seqGiven bool, err error) {
	if len(b) > 127 {
		return id, false, errStreamIDInvalid
	}
	if len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		if strict {
			return id, false, errStreamIDInvalid
		}
		if b[0] == '-' {
			return store.ID{}, true, nil
		}
		return store.MaxID, true, nil
	}
	dash := -1
	for i, c := range b {
		if c == '-' {
			dash = i
			break
		}
	}
	msPart := b
	if dash >= 0 {
		msPart = b[:dash]
	}
	ms, ok := string2ull(msPart)
	if !ok {
		return id, false, errStreamIDInvalid
	}
	seq := missingSeq
	seqGiven = true
	if dash >= 0 {
		rest := b[dash+1:]
		if allowAutoSeq && len(rest) == 1 && rest[0] == '*' {
			seq, seqGiven = 0, false
		} else if seq, ok = string2ull(rest); !ok {
			return id, false, errStreamIDInvalid
		}
	}
	return store.ID{Ms: ms, Seq: seq}, seqGiven, nil
}

// string2ull is Redis's: string2ll for canonical numbers (negative is invalid), else strtoull,
// which allows leading spaces, a sign (a '-' wraps around) and leading zeros.
func string2ull(b []byte) (uint64, bool) {
	if n, ok := parseInt(b); ok {
		return uint64(n), n >= 0
	}
	i := 0
	for i < len(b) && isSpaceByte(b[i]) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i >= len(b) {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseIntervalID parses an XRANGE bound: optional "(" for exclusive, then an ID or -/+.
func parseIntervalID(b []byte, missingSeq uint64) (id store.ID, exclusive bool, err error) {
	if len(b) > 1 && b[0] == '(' {
		id, _, err = parseStreamID(b[1:], missingSeq, true, false)
		return id, true, err
	}
	id, _, err = parseStreamID(b, missingSeq, false, false)
	return id, false, err
}

func idReply(id store.ID) []byte { return id.Append(nil) }

// idValue is a stream ID reply that encodes itself as a bulk string without a temporary slice.
type idValue store.ID

func (v idValue) AppendRESP(b []byte, proto int) []byte {
	var tmp [48]byte
	return resp.AppendBulk(b, store.ID(v).Append(tmp[:0]))
}

// entryReply is one [id, [field, value, ...]] element, encoded at once: the same bytes in
// RESP2 and RESP3, and a copy, so no reply aliases stream memory (which may live off-heap).
func entryReply(id store.ID, fv [][]byte) resp.Raw {
	n := 32
	for _, v := range fv {
		n += len(v) + 16
	}
	b := make([]byte, 0, n)
	b = append(b, "*2\r\n"...)
	var idb [48]byte
	b = resp.AppendBulk(b, id.Append(idb[:0]))
	b = resp.AppendArrayLen(b, len(fv))
	for _, v := range fv {
		b = resp.AppendBulk(b, v)
	}
	return resp.Raw(b)
}

// parseTrim parses XADD/XTRIM's options from args[2:] (see streamParseAddOrTrimArgsOrReply).
// For XADD it returns the index of the ID argument.
func parseTrim(args [][]byte, xadd bool) (t store.TrimArgs, noMkStream bool, idIdx int, err error) {
	limitGiven := false
	i := 2
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			return finishTrim(t, limitGiven, xadd, noMkStream, i)
		case eq(opt, "maxlen") && more > 0:
			if t.Strategy != store.TrimNone {
				return t, false, 0, redisError("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
			}
			t.Approx = false
			next := args[i+1]
			if more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				t.Approx = next[0] == '~'
				i++
			}
			n, ok := parseInt(args[i+1])
			if !ok {
				return t, false, 0, errNotInteger
			}
			if n < 0 {
				return t, false, 0, errMaxLenNegative
			}
			t.MaxLen = n
			t.Strategy = store.TrimMaxLen
			i++
		case eq(opt, "minid") && more > 0:
			if t.Strategy != store.TrimNone {
				return t, false, 0, redisError("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
			}
			t.Approx = false
			next := args[i+1]
			if more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				t.Approx = next[0] == '~'
				i++
			}
			id, _, err := parseStreamID(args[i+1], 0, true, false)
			if err != nil {
				return t, false, 0, err
			}
			t.MinID = id
			t.Strategy = store.TrimMinID
			i++
		case eq(opt, "limit") && more > 0:
			n, ok := parseInt(args[i+1])
			if !ok {
				return t, false, 0, errNotInteger
			}
			if n < 0 {
				return t, false, 0, errLimitNegative
			}
			t.Limit = n
			limitGiven = true
			i++
		case xadd && eq(opt, "nomkstream"):
			noMkStream = true
		case xadd:
			return finishTrim(t, limitGiven, xadd, noMkStream, i)
		default:
			return t, false, 0, errSyntax
		}
	}
	return finishTrim(t, limitGiven, xadd, noMkStream, i)
}

func finishTrim(t store.TrimArgs, limitGiven, xadd, noMk bool, i int) (store.TrimArgs, bool, int, error) {
	if t.Limit != 0 && t.Strategy == store.TrimNone {
		return t, false, 0, redisError("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
	}
	if !xadd && t.Strategy == store.TrimNone {
		return t, false, 0, redisError("ERR syntax error, XTRIM must be called with a trimming strategy")
	}
	if limitGiven {
		if !t.Approx {
			return t, false, 0, errLimitWithoutApprox
		}
	} else if t.Approx {
		t.Limit = 0 // the store applies 100*stream-node-max-entries
	}
	return t, noMk, i, nil
}

func cmdXadd(c *client, args [][]byte) (any, error) {
	trim, noMk, idIdx, err := parseTrim(args, true)
	if err != nil {
		return nil, err
	}
	var id store.ID
	idGiven, seqGiven := false, false
	if idIdx < len(args) && !(len(args[idIdx]) == 1 && args[idIdx][0] == '*') {
		id, seqGiven, err = parseStreamID(args[idIdx], 0, true, true)
		if err != nil {
			return nil, err
		}
		idGiven = true
	}
	fieldPos := idIdx + 1
	if n := len(args) - fieldPos; n < 2 || n%2 == 1 {
		return nil, errArity("xadd")
	}
	if idGiven && seqGiven && id.IsZero() {
		return nil, errStreamIDZero
	}
	st, err := c.getStream(args[1])
	if err != nil {
		return nil, err
	}
	if st == nil {
		if noMk {
			return nil, nil
		}
		st = c.s.newStream()
		c.keyspace().Set(string(args[1]), st)
		c.keyAdded(args[1])
	}
	if st.LastID == store.MaxID {
		return nil, errStreamExhausted
	}
	if !idGiven {
		var ok bool
		id, ok = st.NextID(uint64(c.s.store.NowMs()))
		if !ok {
			return nil, errStreamExhausted
		}
	} else if !seqGiven {
		if st.LastID.Ms == id.Ms {
			if st.LastID.Seq == math.MaxUint64 {
				// Redis reports this overflow with errno unset, hence its odd message.
				return nil, redisError("ERR Elements are too large to be stored")
			}
			id = store.ID{Ms: id.Ms, Seq: st.LastID.Seq + 1}
		}
	}
	if id.Compare(st.LastID) <= 0 {
		return nil, errStreamIDSmaller
	}
	st.Append(id, args[fieldPos:])
	c.notify(notifyStream, "xadd", args[1])
	if trim.Strategy != store.TrimNone && st.Trim(trim) > 0 {
		c.notify(notifyStream, "xtrim", args[1])
	}
	c.touch(args[1])
	c.s.signalKeyBytes(c.db, args[1])
	return idValue(id), nil
}

// newStream returns an empty stream with the configured node limits.
func (s *Server) newStream() *store.Stream {
	st := store.NewStream()
	st.NodeMaxEntries = s.conf.streamNodeMaxEntries
	st.NodeMaxBytes = s.conf.streamNodeMaxBytes
	return st
}

func cmdXlen(c *client, args [][]byte) (any, error) {
	st, err := c.getStream(args[1])
	if err != nil || st == nil {
		return 0, err
	}
	return int64(st.Len()), nil
}

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
		out := resp.Array{}
		st.Range(start, end, int(min(count, math.MaxInt32)), rev, func(id store.ID, fv [][]byte) bool {
			out = append(out, entryReply(id, fv))
			return true
		})
		return out, nil
	}
}

func cmdXdel(c *client, args [][]byte) (any, error) {
	// Redis answers 0 for a missing key before looking at the IDs.
	st, err := c.getStream(args[1])
	if err != nil || st == nil {
		return 0, err
	}
	ids, err := parseStreamIDs(args[2:])
	if err != nil {
		return nil, err
	}
	n := 0
	for _, id := range ids {
		if st.Delete(id) {
			n++
		}
	}
	if n > 0 {
		c.touch(args[1])
		c.notify(notifyStream, "xdel", args[1])
	}
	return n, nil
}

func cmdXtrim(c *client, args [][]byte) (any, error) {
	st, err := c.getStream(args[1])
	if err != nil || st == nil {
		return 0, err // a missing key is 0 before the options are looked at, as in Redis
	}
	trim, _, _, err := parseTrim(args, false)
	if err != nil {
		return nil, err
	}
	n := st.Trim(trim)
	if n > 0 {
		c.touch(args[1])
		c.notify(notifyStream, "xtrim", args[1])
	}
	return n, nil
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

func cmdXread(c *client, args [][]byte) (any, error) {
	isGroup := len(args[0]) == 10
	a := xreadArgs{isGroup: isGroup}
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

	// Serve synchronously what can be served.
	var out []any
	for i, key := range a.keys {
		st, _ := c.getStream(key)
		if st == nil {
			continue
		}
		gt := a.ids[i]
		serve, history := false, false
		var g *store.Group
		var cons *store.Consumer
		if isGroup {
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
		if !serve {
			continue
		}
		if isGroup {
			// Redis creates (or refreshes) the consumer only when it serves it.
			cons = c.createConsumer(g, a.consumer, key)
			cons.SeenTime = c.s.store.NowMs()
		}
		start, _ := gt.Incr()
		var entries resp.Array
		if history {
			entries = c.s.replyFromConsumerPEL(st, cons, start, a.count)
		} else {
			entries = c.s.replyWithRange(st, start, a.count, g, cons, a.noack)
		}
		out = append(out, clone(key), entries)
	}
	if len(out) > 0 {
		return streamsReply(c.proto, out), nil
	}
	if !a.block {
		return resp.NullArray, nil
	}
	keys := make([]string, n)
	for i, k := range a.keys {
		keys[i] = string(k)
	}
	ids := append([]store.ID(nil), a.ids...)
	count := a.count
	if count == 0 {
		count = 1000 // XREAD_BLOCKED_DEFAULT_COUNT
	}
	var gone any
	if isGroup {
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
			var cons *store.Consumer
			if isGroup {
				g = st.Group(a.group)
				if g == nil {
					return errNoGroupDestroyed, true
				}
				gt = g.LastID
			}
			if !gt.Less(st.LastID) {
				return nil, false
			}
			if isGroup {
				cons = c.createConsumer(g, a.consumer, []byte(key))
				cons.SeenTime = c.s.store.NowMs()
			}
			start, _ := gt.Incr()
			entries := c.s.replyWithRange(st, start, count, g, cons, a.noack)
			return streamsReply(c.proto, []any{key, entries}), true
		},
	}, nil
}

// createConsumer is streamCreateConsumer: the consumer, created if new (with its event), and
// its seen-time refreshed.
func (c *client) createConsumer(g *store.Group, name string, key []byte) *store.Consumer {
	now := c.s.store.NowMs()
	cons, created := g.CreateConsumer(name, now)
	if created {
		c.notify(notifyStream, "xgroup-createconsumer", key)
	}
	cons.SeenTime = now
	return cons
}

// streamsReply shapes XREAD's reply: [[key, entries], ...] in RESP2, {key: entries} in RESP3.
func streamsReply(proto int, kv []any) any {
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
func (s *Server) replyWithRange(st *store.Stream, start store.ID, count int64, g *store.Group, cons *store.Consumer, noack bool) resp.Array {
	out := resp.Array{}
	now := s.store.NowMs()
	st.Range(start, store.MaxID, int(min(count, math.MaxInt32)), false, func(id store.ID, fv [][]byte) bool {
		if g != nil {
			st.Delivered(g, id)
		}
		out = append(out, entryReply(id, fv))
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
func (s *Server) replyFromConsumerPEL(st *store.Stream, cons *store.Consumer, start store.ID, count int64) resp.Array {
	out := resp.Array{}
	now := s.store.NowMs()
	cons.PEL.Ascend(start, store.MaxID, func(nk *store.Nack) bool {
		if count > 0 && int64(len(out)) >= count {
			return false
		}
		if fv, ok := st.Get(nk.ID); ok {
			out = append(out, entryReply(nk.ID, fv))
			nk.DeliveryTime = now
			nk.DeliveryCount++
		} else {
			out = append(out, resp.Array{idReply(nk.ID), resp.NullArray})
		}
		return true
	})
	return out
}

func cmdXack(c *client, args [][]byte) (any, error) {
	st, err := c.getStream(args[1])
	if err != nil {
		return nil, err
	}
	var g *store.Group
	if st != nil {
		g = st.Group(string(args[2]))
	}
	if g == nil {
		return 0, nil
	}
	ids, err := parseStreamIDs(args[3:])
	if err != nil {
		return nil, err
	}
	n := 0
	for _, id := range ids {
		if g.Ack(id) {
			n++
		}
	}
	return n, nil
}

func cmdXpending(c *client, args [][]byte) (any, error) {
	justInfo := len(args) == 3
	if len(args) != 3 && (len(args) < 6 || len(args) > 9) {
		return nil, errSyntax
	}
	var start, end store.ID
	var count, minIdle int64
	var consumerName []byte
	if len(args) >= 6 {
		si := 3
		if eq(args[3], "idle") {
			n, ok := parseInt(args[4])
			if !ok {
				return nil, errNotInteger
			}
			minIdle = n
			if len(args) < 8 {
				return nil, errSyntax
			}
			si += 2
		}
		n, ok := parseInt(args[si+2])
		if !ok {
			return nil, errNotInteger
		}
		count = max(n, 0)
		var ex bool
		var err error
		if start, ex, err = parseIntervalID(args[si], 0); err != nil {
			return nil, err
		}
		if ex {
			if start, ok = start.Incr(); !ok {
				return nil, redisError("ERR invalid start ID for the interval")
			}
		}
		if end, ex, err = parseIntervalID(args[si+1], math.MaxUint64); err != nil {
			return nil, err
		}
		if ex {
			if end, ok = end.Decr(); !ok {
				return nil, redisError("ERR invalid end ID for the interval")
			}
		}
		if si+3 < len(args) {
			consumerName = args[si+3]
		}
	}
	st, err := c.getStream(args[1])
	if err != nil {
		return nil, err
	}
	var g *store.Group
	if st != nil {
		g = st.Group(string(args[2]))
	}
	if g == nil {
		return nil, errorf("NOGROUP No such key '%s' or consumer group '%s'", args[1], args[2])
	}
	if justInfo {
		if g.PEL.Len() == 0 {
			return resp.Array{0, nil, nil, resp.NullArray}, nil
		}
		first, _ := g.PEL.First()
		last, _ := g.PEL.Last()
		cons := resp.Array{}
		for _, cn := range g.SortedConsumers() {
			if cn.PEL.Len() == 0 {
				continue
			}
			cons = append(cons, resp.Array{cn.Name, strconv.Itoa(cn.PEL.Len())})
		}
		return resp.Array{g.PEL.Len(), idReply(first), idReply(last), cons}, nil
	}
	ascend := g.PEL.Ascend
	if consumerName != nil {
		cn := g.Consumer(string(consumerName))
		if cn == nil {
			return resp.Array{}, nil
		}
		ascend = cn.PEL.Ascend
	}
	now := c.s.store.NowMs()
	out := resp.Array{}
	ascend(start, end, func(nk *store.Nack) bool {
		if count == 0 {
			return false
		}
		idle := now - nk.DeliveryTime
		if minIdle != 0 && idle < minIdle {
			return true
		}
		count--
		out = append(out, resp.Array{idReply(nk.ID), nk.Consumer.Name, max(idle, 0), nk.DeliveryCount})
		return true
	})
	return out, nil
}

func cmdXgroup(c *client, args [][]byte) (any, error) {
	sub := lowerASCII(args[1])
	mkstream := false
	entriesRead := int64(store.InvalidEntriesRead)
	syntaxErr := errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try XGROUP HELP.", args[1])
	switch sub {
	case "create":
		for i := 5; i < len(args); {
			switch {
			case eq(args[i], "mkstream"):
				mkstream = true
				i++
			case eq(args[i], "entriesread") && i+1 < len(args):
				n, ok := parseInt(args[i+1])
				if !ok {
					return nil, errNotInteger
				}
				if n < 0 && n != store.InvalidEntriesRead {
					return nil, errEntriesReadInvalid
				}
				entriesRead = n
				i += 2
			default:
				return nil, syntaxErr
			}
		}
	case "setid":
		if len(args) == 7 {
			if !eq(args[5], "entriesread") {
				return nil, syntaxErr
			}
			n, ok := parseInt(args[6])
			if !ok {
				return nil, errNotInteger
			}
			if n < 0 && n != store.InvalidEntriesRead {
				return nil, errEntriesReadInvalid
			}
			entriesRead = n
		} else if len(args) != 5 {
			return nil, syntaxErr
		}
	}
	st, err := c.getStream(args[2])
	if err != nil {
		return nil, err
	}
	gname := string(args[3])
	var g *store.Group
	if !mkstream {
		if st == nil {
			return nil, errXGroupNoKey
		}
		g = st.Group(gname)
		if g == nil && (sub == "setid" || sub == "createconsumer" || sub == "delconsumer") {
			return nil, errorf("NOGROUP No such consumer group '%s' for key name '%s'", gname, args[2])
		}
	}
	switch sub {
	case "create":
		if len(args) > 8 {
			return nil, syntaxErr
		}
		var id store.ID
		if len(args[4]) == 1 && args[4][0] == '$' {
			if st != nil {
				id = st.LastID
			}
		} else {
			id, _, err = parseStreamID(args[4], 0, true, false)
			if err != nil {
				return nil, err
			}
		}
		if st == nil {
			st = c.s.newStream()
			c.keyspace().Set(string(args[2]), st)
			c.keyAdded(args[2])
			c.s.signalKeyBytes(c.db, args[2]) // dbAdd signals a new stream
			c.touch(args[2])
		}
		if _, ok := st.CreateGroup(gname, id, entriesRead); !ok {
			return nil, errBusyGroup
		}
		c.notify(notifyStream, "xgroup-create", args[2])
		return resp.OK, nil
	case "setid":
		var id store.ID
		if len(args[4]) == 1 && args[4][0] == '$' {
			id = st.LastID
		} else {
			id, _, err = parseStreamID(args[4], 0, false, false)
			if err != nil {
				return nil, err
			}
		}
		g.LastID = id
		g.EntriesRead = entriesRead
		c.notify(notifyStream, "xgroup-setid", args[2])
		return resp.OK, nil
	case "destroy":
		if g == nil {
			return 0, nil
		}
		st.DestroyGroup(gname)
		c.s.signalKey(c.db, string(args[2]))
		c.notify(notifyStream, "xgroup-destroy", args[2])
		return 1, nil
	case "createconsumer":
		_, created := g.CreateConsumer(string(args[4]), c.s.store.NowMs())
		if created {
			c.notify(notifyStream, "xgroup-createconsumer", args[2])
			return 1, nil
		}
		return 0, nil
	case "delconsumer":
		n := g.DeleteConsumer(string(args[4]))
		if n >= 0 {
			c.notify(notifyStream, "xgroup-delconsumer", args[2])
		}
		return max(n, 0), nil
	}
	return nil, syntaxErr
}

func cmdXgroupHelp(c *client, args [][]byte) (any, error) {
	return helpReply("XGROUP",
		"CREATE <key> <groupname> <id|$> [option]",
		"    Create a new consumer group. Options are:",
		"    * MKSTREAM",
		"      Create the empty stream if it does not exist.",
		"    * ENTRIESREAD entries_read",
		"      Set the group's entries_read counter (internal use).",
		"CREATECONSUMER <key> <groupname> <consumer>",
		"    Create a new consumer in the specified group.",
		"DELCONSUMER <key> <groupname> <consumer>",
		"    Remove the specified consumer.",
		"DESTROY <key> <groupname>",
		"    Remove the specified group.",
		"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
		"    Set the current group ID and entries_read counter.",
	), nil
}

func cmdXinfoHelp(c *client, args [][]byte) (any, error) {
	return helpReply("XINFO",
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.",
	), nil
}

// helpReply is Redis's addReplyHelp: a header, the lines, and the HELP line, as status replies.
func helpReply(cmd string, lines ...string) resp.Array {
	out := resp.Array{resp.Simple(cmd + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")}
	for _, l := range lines {
		out = append(out, resp.Simple(l))
	}
	return append(out, resp.Simple("HELP"), resp.Simple("    Prints this help."))
}

func (c *client) streamOrNoKey(key []byte) (*store.Stream, error) {
	st, err := c.getStream(key)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, errNoSuchKey
	}
	return st, nil
}

func cmdXinfoGroups(c *client, args [][]byte) (any, error) {
	st, err := c.streamOrNoKey(args[2])
	if err != nil {
		return nil, err
	}
	out := resp.Array{}
	for _, g := range st.Groups() {
		var er any
		if g.EntriesRead != store.InvalidEntriesRead {
			er = g.EntriesRead
		}
		var lag any
		if l, ok := st.Lag(g); ok {
			lag = l
		}
		out = append(out, resp.Map{
			"name", g.Name,
			"consumers", len(g.Consumers),
			"pending", g.PEL.Len(),
			"last-delivered-id", idReply(g.LastID),
			"entries-read", er,
			"lag", lag,
		})
	}
	return out, nil
}

func cmdXinfoConsumers(c *client, args [][]byte) (any, error) {
	st, err := c.streamOrNoKey(args[2])
	if err != nil {
		return nil, err
	}
	g := st.Group(string(args[3]))
	if g == nil {
		return nil, errorf("NOGROUP No such consumer group '%s' for key name '%s'", args[3], args[2])
	}
	now := c.s.store.NowMs()
	out := resp.Array{}
	for _, cn := range g.SortedConsumers() {
		out = append(out, resp.Map{
			"name", cn.Name,
			"pending", cn.PEL.Len(),
			"idle", max(now-cn.SeenTime, 0),
		})
	}
	return out, nil
}

func cmdXinfoStream(c *client, args [][]byte) (any, error) {
	full := false
	count := int64(10)
	if len(args) > 3 {
		if !eq(args[3], "full") {
			return nil, errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try XINFO HELP.", args[1])
		}
		full = true
		if len(args) > 4 {
			if len(args) != 6 || !eq(args[4], "count") {
				return nil, errSyntax
			}
			n, ok := parseInt(args[5])
			if !ok {
				return nil, errNotInteger
			}
			count = max(n, 0)
		}
	}
	st, err := c.streamOrNoKey(args[2])
	if err != nil {
		return nil, err
	}
	out := resp.Map{
		"length", int64(st.Len()),
		"radix-tree-keys", st.NumNodes(),
		"radix-tree-nodes", radixNodes(st.NumNodes()),
		"last-generated-id", idReply(st.LastID),
		"max-deleted-entry-id", idReply(st.MaxDeletedID),
		"entries-added", int64(st.EntriesAdded),
	}
	if !full {
		var first, last any
		st.Range(store.ID{}, store.MaxID, 1, false, func(id store.ID, fv [][]byte) bool {
			first = entryReply(id, fv)
			return false
		})
		st.Range(store.ID{}, store.MaxID, 1, true, func(id store.ID, fv [][]byte) bool {
			last = entryReply(id, fv)
			return false
		})
		out = append(out, "recorded-first-entry-id", idReply(st.FirstID),
			"groups", st.NumGroups(), "first-entry", first, "last-entry", last)
		return out, nil
	}
	out = append(out, "recorded-first-entry-id", idReply(st.FirstID))
	entries := resp.Array{}
	st.Range(store.ID{}, store.MaxID, int(min(count, math.MaxInt32)), false, func(id store.ID, fv [][]byte) bool {
		entries = append(entries, entryReply(id, fv))
		return true
	})
	out = append(out, "entries", entries)
	groups := resp.Array{}
	for _, g := range st.Groups() {
		var er, lag any
		if g.EntriesRead != store.InvalidEntriesRead {
			er = g.EntriesRead
		}
		if l, ok := st.Lag(g); ok {
			lag = l
		}
		pel := resp.Array{}
		g.PEL.Ascend(store.ID{}, store.MaxID, func(nk *store.Nack) bool {
			if count > 0 && int64(len(pel)) >= count {
				return false
			}
			pel = append(pel, resp.Array{idReply(nk.ID), nk.Consumer.Name, nk.DeliveryTime, nk.DeliveryCount})
			return true
		})
		consumers := resp.Array{}
		for _, cn := range g.SortedConsumers() {
			cpel := resp.Array{}
			cn.PEL.Ascend(store.ID{}, store.MaxID, func(nk *store.Nack) bool {
				if count > 0 && int64(len(cpel)) >= count {
					return false
				}
				cpel = append(cpel, resp.Array{idReply(nk.ID), nk.DeliveryTime, nk.DeliveryCount})
				return true
			})
			consumers = append(consumers, resp.Map{
				"name", cn.Name,
				"seen-time", cn.SeenTime,
				"pel-count", cn.PEL.Len(),
				"pending", cpel,
			})
		}
		groups = append(groups, resp.Map{
			"name", g.Name,
			"last-delivered-id", idReply(g.LastID),
			"entries-read", er,
			"lag", lag,
			"pel-count", g.PEL.Len(),
			"pending", pel,
			"consumers", consumers,
		})
	}
	out = append(out, "groups", groups)
	return out, nil
}

// radixNodes approximates the rax node count Redis reports for n keys.
func radixNodes(n int) int {
	if n == 0 {
		return 1
	}
	return n + (n+1)/2
}

// claimArgs is XCLAIM's options.
type claimArgs struct {
	minIdle    int64
	ids        []store.ID
	idle       int64 // -1: not given
	timeMs     int64 // -1: not given
	retryCount int64 // -1: not given
	force      bool
	justID     bool
	lastID     store.ID
}

func cmdXclaim(c *client, args [][]byte) (any, error) {
	st, err := c.getStream(args[1])
	if err != nil {
		return nil, err
	}
	var g *store.Group
	if st != nil {
		g = st.Group(string(args[2]))
	}
	if g == nil {
		return nil, errorf("NOGROUP No such key '%s' or consumer group '%s'", args[1], args[2])
	}
	minIdle, ok := parseInt(args[4])
	if !ok {
		return nil, redisError("ERR Invalid min-idle-time argument for XCLAIM")
	}
	if minIdle < 0 {
		minIdle = 0
	}
	a := claimArgs{minIdle: minIdle, idle: -1, timeMs: -1, retryCount: -1}
	j := 5
	for ; j < len(args); j++ {
		id, _, err := parseStreamID(args[j], 0, true, false)
		if err != nil {
			break
		}
		a.ids = append(a.ids, id)
	}
	now := c.s.store.NowMs()
	for ; j < len(args); j++ {
		more := len(args) - 1 - j
		o := args[j]
		switch {
		case eq(o, "force"):
			a.force = true
		case eq(o, "justid"):
			a.justID = true
		case eq(o, "idle") && more > 0:
			j++
			n, ok := parseInt(args[j])
			if !ok {
				return nil, redisError("ERR Invalid IDLE option argument for XCLAIM")
			}
			a.timeMs = now - n
			a.idle = n
		case eq(o, "time") && more > 0:
			j++
			n, ok := parseInt(args[j])
			if !ok {
				return nil, redisError("ERR Invalid TIME option argument for XCLAIM")
			}
			a.timeMs = n
		case eq(o, "retrycount") && more > 0:
			j++
			n, ok := parseInt(args[j])
			if !ok {
				return nil, redisError("ERR Invalid RETRYCOUNT option argument for XCLAIM")
			}
			a.retryCount = n
		case eq(o, "lastid") && more > 0:
			j++
			id, _, err := parseStreamID(args[j], 0, true, false)
			if err != nil {
				return nil, err
			}
			a.lastID = id
		default:
			return nil, errorf("ERR Unrecognized XCLAIM option '%s'", o)
		}
	}
	if a.timeMs != -1 {
		if a.timeMs > now {
			a.timeMs = now
		}
	} else {
		a.timeMs = now
	}
	if g.LastID.Less(a.lastID) {
		g.LastID = a.lastID
	}
	// The consumer is created (or refreshed) only once something is claimed, as in Redis.
	var cons *store.Consumer
	consumer := func() *store.Consumer {
		if cons == nil {
			cons = c.createConsumer(g, string(args[3]), args[1])
			cons.SeenTime = now
		}
		return cons
	}
	out := resp.Array{}
	for _, id := range a.ids {
		nk := g.PEL.Get(id)
		fv, exists := st.Get(id)
		if a.force && nk == nil && exists {
			nk = g.PEL.Add(store.Nack{ID: id, DeliveryTime: now, DeliveryCount: 0, Consumer: consumer()})
			nk.Consumer.PEL.Add(nk)
		}
		if nk == nil {
			continue
		}
		if !exists {
			// The entry was deleted: drop it from the PEL (the group's last: that moves nk).
			nk.Consumer.PEL.Remove(id)
			g.PEL.Remove(id)
			continue
		}
		if a.minIdle > 0 && now-nk.DeliveryTime < a.minIdle {
			continue
		}
		if nk.Consumer != consumer() {
			nk.Consumer.PEL.Remove(id)
			nk.Consumer = cons
			cons.PEL.Add(nk)
		}
		nk.DeliveryTime = a.timeMs
		if a.retryCount >= 0 {
			nk.DeliveryCount = a.retryCount
		} else if !a.justID {
			nk.DeliveryCount++
		}
		if a.justID {
			out = append(out, idReply(id))
		} else {
			out = append(out, entryReply(id, fv))
		}
	}
	return out, nil
}

func cmdXautoclaim(c *client, args [][]byte) (any, error) {
	// Arguments are checked before the key, as in Redis.
	minIdle, ok := parseInt(args[4])
	if !ok {
		return nil, redisError("ERR Invalid min-idle-time argument for XAUTOCLAIM")
	}
	if minIdle < 0 {
		minIdle = 0
	}
	start, ex, err := parseIntervalID(args[5], 0)
	if err != nil {
		return nil, err
	}
	if ex {
		if start, ok = start.Incr(); !ok {
			return nil, redisError("ERR invalid start ID for the interval")
		}
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case eq(args[j], "count") && more > 0:
			j++
			n, ok := parseInt(args[j])
			if !ok || n < 1 || n > math.MaxInt64/10 {
				return nil, redisError("ERR COUNT must be > 0")
			}
			count = n
		case eq(args[j], "justid"):
			justID = true
		default:
			return nil, errSyntax
		}
	}
	st, err := c.getStream(args[1])
	if err != nil {
		return nil, err
	}
	var g *store.Group
	if st != nil {
		g = st.Group(string(args[2]))
	}
	if g == nil {
		return nil, errorf("NOGROUP No such key '%s' or consumer group '%s'", args[1], args[2])
	}
	now := c.s.store.NowMs()
	attempts := count * 10
	claimed := resp.Array{}
	deleted := resp.Array{}
	next := store.ID{}
	// IDs, not *Nack: removing from the group's PEL moves its entries.
	var toClaim, toDelete []store.ID
	// As Redis: deleted entries leave the PEL and count towards COUNT; the cursor is the first
	// entry not examined, 0-0 at the end.
	g.PEL.Ascend(start, store.MaxID, func(nk *store.Nack) bool {
		if attempts <= 0 || count == 0 {
			next = nk.ID
			return false
		}
		attempts--
		if _, exists := st.Get(nk.ID); !exists {
			toDelete = append(toDelete, nk.ID)
			count--
			return true
		}
		if minIdle > 0 && now-nk.DeliveryTime < minIdle {
			return true
		}
		toClaim = append(toClaim, nk.ID)
		count--
		return true
	})
	for _, id := range toDelete {
		g.PEL.Get(id).Consumer.PEL.Remove(id)
		g.PEL.Remove(id)
		deleted = append(deleted, idReply(id))
	}
	// The consumer is created (or refreshed) only if something is claimed, as in Redis.
	var cons *store.Consumer
	if len(toClaim) > 0 {
		cons = c.createConsumer(g, string(args[3]), args[1])
		cons.SeenTime = now
	}
	for _, id := range toClaim {
		nk := g.PEL.Get(id)
		if nk.Consumer != cons {
			nk.Consumer.PEL.Remove(nk.ID)
			nk.Consumer = cons
			cons.PEL.Add(nk)
		}
		nk.DeliveryTime = now
		if !justID {
			nk.DeliveryCount++
		}
		if justID {
			claimed = append(claimed, idReply(nk.ID))
		} else {
			fv, _ := st.Get(nk.ID)
			claimed = append(claimed, entryReply(nk.ID, fv))
		}
	}
	return resp.Array{idReply(next), claimed, deleted}, nil
}

func cmdXsetid(c *client, args [][]byte) (any, error) {
	id, _, err := parseStreamID(args[2], 0, true, false)
	if err != nil {
		return nil, err
	}
	entriesAdded := int64(-1)
	var maxXdel store.ID
	for i := 3; i < len(args); i++ {
		more := len(args) - 1 - i
		switch {
		case eq(args[i], "entriesadded") && more > 0:
			i++
			n, ok := parseInt(args[i])
			if !ok {
				return nil, errNotInteger
			}
			if n < 0 {
				return nil, redisError("ERR entries_added must be positive")
			}
			entriesAdded = n
		case eq(args[i], "maxdeletedid") && more > 0:
			i++
			m, _, err := parseStreamID(args[i], 0, true, false)
			if err != nil {
				return nil, err
			}
			if id.Less(m) {
				return nil, errSetIDMaxDeleted
			}
			maxXdel = m
		default:
			return nil, errSyntax
		}
	}
	st, err := c.getStream(args[1])
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, errNoSuchKey
	}
	if st.Len() > 0 {
		if last, ok := st.LastEntryID(); ok && id.Less(last) {
			return nil, errSetIDSmaller
		}
		if entriesAdded != -1 && st.Len() > uint64(entriesAdded) {
			return nil, errSetIDEntriesAdded
		}
	}
	c.touch(args[1])
	c.notify(notifyStream, "xsetid", args[1])
	st.LastID = id
	if entriesAdded != -1 {
		st.EntriesAdded = uint64(entriesAdded)
	}
	if !maxXdel.IsZero() {
		st.MaxDeletedID = maxXdel
	}
	return resp.OK, nil
}

// parseStreamIDs parses every argument as a complete stream ID (XDEL, XACK): all of them before
// any takes effect, as Redis does, so one bad ID changes nothing.
func parseStreamIDs(args [][]byte) ([]store.ID, error) {
	ids := make([]store.ID, 0, len(args))
	for _, a := range args {
		id, _, err := parseStreamID(a, 0, true, false)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}
