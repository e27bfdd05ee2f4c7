package server

import (
	"math"
	"math/big"
	"math/rand"
	"strconv"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// Hash commands beyond HSET/HGET/HGETALL/HDEL/HINCRBY (cmd_sethash.go), as Redis 7.0.15's
// t_hash.c.
var hashCommands = []*command{
	{name: "hmget", arity: -3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Get the values of all the given hash fields", h: cmdHmget},
	{name: "hlen", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Get the number of fields in a hash", h: cmdHlen},
	{name: "hexists", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Determine if a hash field exists", h: cmdHexists},
	{name: "hkeys", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Get all the fields in a hash", h: cmdHkeysVals(true)},
	{name: "hvals", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Get all the values in a hash", h: cmdHkeysVals(false)},
	{name: "hsetnx", arity: 4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Set the value of a hash field, only if the field does not exist", h: cmdHsetnx},
	{name: "hstrlen", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Get the length of the value of a hash field", h: cmdHstrlen},
	{name: "hincrbyfloat", arity: 4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Increment the float value of a hash field by the given amount", h: cmdHincrbyfloat},
	{name: "hrandfield", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Get one or multiple random fields from a hash", h: cmdHrandfield},
	{name: "hscan", arity: -3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Incrementally iterate hash fields and associated values", h: cmdHscan},
}

func cmdHmget(c *client, args [][]byte) (any, error) {
	h, err := c.getHash(args[1])
	if err != nil {
		return nil, err
	}
	out := make(resp.Array, len(args)-2)
	for i, f := range args[2:] {
		if h != nil {
			if v, ok := h.Get(f); ok {
				out[i] = v
			}
		}
	}
	return out, nil
}

func cmdHlen(c *client, args [][]byte) (any, error) {
	h, err := c.getHash(args[1])
	if err != nil || h == nil {
		return 0, err
	}
	return h.Len(), nil
}

func cmdHexists(c *client, args [][]byte) (any, error) {
	h, err := c.getHash(args[1])
	if err != nil || h == nil {
		return 0, err
	}
	if _, ok := h.Get(args[2]); ok {
		return 1, nil
	}
	return 0, nil
}

// cmdHkeysVals is HKEYS or HVALS: an array in both protocols.
func cmdHkeysVals(keys bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		h, err := c.getHash(args[1])
		if err != nil {
			return nil, err
		}
		out := resp.Array{}
		if h != nil {
			h.Each(func(f, v []byte) {
				if keys {
					out = append(out, f)
				} else {
					out = append(out, v)
				}
			})
		}
		return out, nil
	}
}

// hashForWrite returns the hash at key, created (with its "new" event) if missing.
func (c *client) hashForWrite(key []byte) (*store.Hash, error) {
	h, err := c.getHash(key)
	if err != nil || h != nil {
		return h, err
	}
	h = store.NewHash()
	c.keyspace().Set(string(key), h)
	c.keyAdded(key)
	return h, nil
}

func cmdHsetnx(c *client, args [][]byte) (any, error) {
	h, err := c.hashForWrite(args[1])
	if err != nil {
		return nil, err
	}
	if _, ok := h.Get(args[2]); ok {
		return 0, nil
	}
	st := c.s.conf
	h.Set(clone(args[2]), clone(args[3]), st.hashMaxListpackEntries, st.hashMaxListpackValue)
	c.touch(args[1])
	c.notify(notifyHash, "hset", args[1])
	return 1, nil
}

func cmdHstrlen(c *client, args [][]byte) (any, error) {
	h, err := c.getHash(args[1])
	if err != nil || h == nil {
		return 0, err
	}
	v, _ := h.Get(args[2])
	return len(v), nil
}

func cmdHincrbyfloat(c *client, args [][]byte) (any, error) {
	incr, ok := longDouble(args[3])
	if !ok {
		return nil, errNotFloat
	}
	if incr.IsInf() {
		return nil, redisError("ERR value is NaN or Infinity")
	}
	h, err := c.hashForWrite(args[1])
	if err != nil {
		return nil, err
	}
	cur := new(big.Float).SetPrec(64)
	if v, ok := h.Get(args[2]); ok {
		f, ok := longDouble(v)
		if !ok {
			return nil, redisError("ERR hash value is not a float")
		}
		cur = f
	}
	sum := new(big.Float).SetPrec(64).Add(cur, incr)
	if sum.IsInf() || outOfLongDouble(sum) {
		return nil, redisError("ERR increment would produce NaN or Infinity")
	}
	out := []byte(humanLongDouble(sum))
	st := c.s.conf
	h.Set(clone(args[2]), out, st.hashMaxListpackEntries, st.hashMaxListpackValue)
	c.touch(args[1])
	c.notify(notifyHash, "hincrbyfloat", args[1])
	return out, nil
}

func cmdHrandfield(c *client, args [][]byte) (any, error) {
	if len(args) < 3 {
		h, err := c.getHash(args[1])
		if err != nil || h == nil {
			return nil, err
		}
		fs := hashPairs(h)
		return fs[rand.Intn(len(fs))][0], nil
	}
	l, ok := parseInt(args[2])
	if !ok {
		return nil, errNotInteger
	}
	if l < -math.MaxInt64 {
		return nil, errorf("ERR value is out of range, value must between %d and %d", -math.MaxInt64, int64(math.MaxInt64))
	}
	withValues := false
	if len(args) > 4 || (len(args) == 4 && !eq(args[3], "withvalues")) {
		return nil, errSyntax
	} else if len(args) == 4 {
		withValues = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			return nil, redisError("ERR value is out of range")
		}
	}
	h, err := c.getHash(args[1])
	if err != nil {
		return nil, err
	}
	if h == nil || l == 0 {
		return resp.Array{}, nil
	}
	pairs := hashPairs(h)
	count, uniq := l, true
	if l < 0 {
		count, uniq = -l, false
	}
	if !uniq || count == 1 {
		if count > maxRandomReply {
			// Redis would build the reply until memory runs out; refuse instead.
			return nil, errorf("ERR value is out of range, value must between %d and %d", -maxRandomReply, int64(math.MaxInt64))
		}
		return &randomPicks{pairs: pairs, count: count, withValues: withValues}, nil
	}
	if count < int64(len(pairs)) {
		rand.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		pairs = pairs[:count]
	}
	return c.randfieldReply(pairs, withValues), nil
}

// randfieldReply is HRANDFIELD's array: fields, or with values a flat array in RESP2 and an
// array of [field, value] pairs in RESP3.
func (c *client) randfieldReply(pairs [][2][]byte, withValues bool) resp.Array {
	out := make(resp.Array, 0, len(pairs)*2)
	for _, p := range pairs {
		switch {
		case !withValues:
			out = append(out, p[0])
		case c.proto >= 3:
			out = append(out, resp.Array{p[0], p[1]})
		default:
			out = append(out, p[0], p[1])
		}
	}
	return out
}

// randomPicks is HRANDFIELD's reply for a negative count (repeats allowed): picked while it is
// encoded straight into the output buffer, as Redis writes it, not first gathered into a slice
// of pairs and a reply array (HRANDFIELD h -1000000 took 126 MB more, Redis 8). Encoded under
// the store lock, right after the handler, like every reply.
type randomPicks struct {
	pairs      [][2][]byte
	count      int64
	withValues bool
}

func (r *randomPicks) AppendRESP(b []byte, proto int) []byte {
	n := r.count
	if r.withValues && proto < 3 {
		n *= 2
	}
	// Room for the expected size at once (the mean pick's encoding, plus a tenth), rather than
	// append's doublings, which allocate about twice the reply on the way.
	bulk := func(x []byte) int { return len(x) + 5 + len(strconv.Itoa(len(x))) } // $N\r\n...\r\n
	mean := 0
	for _, p := range r.pairs {
		mean += bulk(p[0])
		if r.withValues {
			mean += bulk(p[1]) + 4 // RESP3's *2\r\n, at most
		}
	}
	if need := int64(mean) / int64(len(r.pairs)) * r.count * 11 / 10; need > int64(cap(b)-len(b)) {
		b = append(getBuf(len(b)+int(need)), b...)
	}
	b = resp.AppendArrayLen(b, int(n))
	for i := int64(0); i < r.count; i++ {
		p := r.pairs[rand.Intn(len(r.pairs))]
		switch {
		case !r.withValues:
			b = resp.AppendBulk(b, p[0])
		case proto >= 3:
			b = resp.AppendArrayLen(b, 2)
			b = resp.AppendBulk(resp.AppendBulk(b, p[0]), p[1])
		default:
			b = resp.AppendBulk(resp.AppendBulk(b, p[0]), p[1])
		}
	}
	return b
}

// hashPairs lists a hash's fields and values in its order.
func hashPairs(h *store.Hash) [][2][]byte {
	out := make([][2][]byte, 0, h.Len())
	h.Each(func(f, v []byte) { out = append(out, [2][]byte{f, v}) })
	return out
}

func cmdHscan(c *client, args [][]byte) (any, error) {
	if _, ok := parseUintArg(args[2]); !ok {
		return nil, redisError("ERR invalid cursor")
	}
	h, err := c.getHash(args[1])
	if err != nil {
		return nil, err
	}
	if h == nil {
		return resp.Array{"0", resp.Array{}}, nil
	}
	pat, err := scanOpts(args[3:])
	if err != nil {
		return nil, err
	}
	out := resp.Array{}
	h.Each(func(f, v []byte) {
		if pat == "" || globMatch(pat, string(f)) {
			out = append(out, f, v)
		}
	})
	return resp.Array{"0", out}, nil
}

// scanOpts parses HSCAN's and SSCAN's [MATCH pattern] [COUNT n] as scanGenericCommand does,
// returning the pattern ("" for every element). The whole collection is returned in one
// reply with cursor 0, as Redis does for a listpack or an intset (see README, Known
// differences, for hashtables).
func scanOpts(opts [][]byte) (string, error) {
	pat := ""
	for i := 0; i < len(opts); i += 2 {
		more := i+1 < len(opts)
		switch {
		case eq(opts[i], "count") && more:
			n, ok := parseInt(opts[i+1])
			if !ok {
				return "", errNotInteger
			}
			if n < 1 {
				return "", errSyntax
			}
		case eq(opts[i], "match") && more:
			pat = string(opts[i+1])
			if pat == "*" {
				pat = ""
			}
		default:
			return "", errSyntax
		}
	}
	return pat, nil
}
