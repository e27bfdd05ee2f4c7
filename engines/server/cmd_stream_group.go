package server

// Consumer groups and their pending entries: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM.

import (
	"math"
	"strconv"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

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

// streamGroup looks up the stream at key and its group named name; either may be nil.
func (c *client) streamGroup(key, name []byte) (*store.Stream, *store.Group, error) {
	st, err := c.getStream(key)
	if err != nil || st == nil {
		return nil, nil, err
	}
	return st, st.Group(string(name)), nil
}

func cmdXack(c *client, args [][]byte) (any, error) {
	_, g, err := c.streamGroup(args[1], args[2])
	if err != nil {
		return nil, err
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
	_, g, err := c.streamGroup(args[1], args[2])
	if err != nil {
		return nil, err
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
	st, g, err := c.streamGroup(args[1], args[2])
	if err != nil {
		return nil, err
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
	out := newEntriesReply(c.proto)
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
			out.addID(id)
		} else {
			out.add(id, fv)
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
	st, g, err := c.streamGroup(args[1], args[2])
	if err != nil {
		return nil, err
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
