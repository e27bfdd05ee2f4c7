package server

// ZMPOP and BZMPOP, as Redis 7.0.15's zmpopGenericCommand (registered in cmd_zset.go's table).

import (
	"strconv"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// zmpopReply is ZMPOP's and BZMPOP's reply: [key, [[member, score], ...]], the scores bulk
// strings in RESP2 and doubles in RESP3 (genericZpopCommand with use_nested_array).
type zmpopReply struct {
	key   []byte
	items []store.Entry
}

func (r *zmpopReply) AppendRESP(b []byte, proto int) []byte {
	b = resp.AppendArrayLen(b, 2)
	b = resp.AppendBulk(b, r.key)
	b = resp.AppendArrayLen(b, len(r.items))
	for _, e := range r.items {
		b = resp.AppendArrayLen(b, 2)
		b = resp.AppendBulk(b, e.Member)
		b = resp.AppendValue(b, resp.Double(e.Score), proto)
	}
	return b
}

// parseZmpop parses "numkeys key... MIN|MAX [COUNT n]" from args[i], as zmpopGenericCommand.
func parseZmpop(args [][]byte, i int) (keys [][]byte, max bool, count int64, err error) {
	return parseMultiPop(args, i, func(b []byte) (bool, error) {
		switch {
		case eq(b, "min"):
			return false, nil
		case eq(b, "max"):
			return true, nil
		}
		return false, errSyntax
	})
}

// tryZmpopKeys pops up to count members from the first non-empty sorted set among keys,
// logged as Redis propagates it: ZPOPMIN|ZPOPMAX key count.
func (c *client) tryZmpopKeys(keys [][]byte, max bool, count int64) (any, error) {
	for _, k := range keys {
		z, err := c.getZset(k)
		if err != nil {
			return nil, err
		}
		if z == nil || z.Len() == 0 {
			continue
		}
		items := c.zpop(k, z, max, count)
		pop := "ZPOPMIN"
		if max {
			pop = "ZPOPMAX"
		}
		c.logAs = [][]byte{[]byte(pop), clone(k), []byte(strconv.FormatInt(count, 10))}
		return &zmpopReply{key: clone(k), items: items}, nil
	}
	return nil, nil
}

func cmdZmpop(c *client, args [][]byte) (any, error) {
	keys, max, count, err := parseZmpop(args, 1)
	if err != nil {
		return nil, err
	}
	v, err := c.tryZmpopKeys(keys, max, count)
	if err != nil || v != nil {
		return v, err
	}
	return resp.NullArray, nil
}

func cmdBzmpop(c *client, args [][]byte) (any, error) {
	if _, err := parseTimeoutSeconds(args[1]); err != nil {
		return nil, err
	}
	keys, max, count, err := parseZmpop(args, 2)
	if err != nil {
		return nil, err
	}
	ready := func(key []byte) bool {
		z, err := c.getZset(key)
		return err == nil && z != nil && z.Len() > 0
	}
	pop := func(keys [][]byte) (any, error) { return c.tryZmpopKeys(keys, max, count) }
	return c.blockingPopKeys(keys, args[1], ready, pop)
}
