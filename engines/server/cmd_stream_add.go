package server

// Stream writes: XADD and its trimming options, XTRIM, XDEL, XSETID, and XLEN.

import (
	"math"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

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
		case (eq(opt, "maxlen") || eq(opt, "minid")) && more > 0:
			if t.Strategy != store.TrimNone {
				return t, false, 0, redisError("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
			}
			t.Approx = false
			next := args[i+1]
			if more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				t.Approx = next[0] == '~'
				i++
			}
			if eq(opt, "maxlen") {
				n, ok := parseInt(args[i+1])
				if !ok {
					return t, false, 0, errNotInteger
				}
				if n < 0 {
					return t, false, 0, errMaxLenNegative
				}
				t.MaxLen = n
				t.Strategy = store.TrimMaxLen
			} else {
				id, _, err := parseStreamID(args[i+1], 0, true, false)
				if err != nil {
					return t, false, 0, err
				}
				t.MinID = id
				t.Strategy = store.TrimMinID
			}
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

func cmdXlen(c *client, args [][]byte) (any, error) {
	st, err := c.getStream(args[1])
	if err != nil || st == nil {
		return 0, err
	}
	return int64(st.Len()), nil
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
