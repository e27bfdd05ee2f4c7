package server

import (
	"math"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// streamCommands is the stream command table; this file also holds what the stream command files
// share: ID parsing and entry replies. The commands are in cmd_stream_add.go (writes),
// cmd_stream_read.go, cmd_stream_group.go (groups and PELs) and cmd_stream_info.go.
var streamCommands = []*command{
	{name: "xadd", arity: -5, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Appends a new entry to a stream", h: cmdXadd},
	{name: "xlen", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Return the number of entries in a stream", h: cmdXlen},
	{name: "xrange", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval", h: cmdXrange(false)},
	{name: "xrevrange", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", h: cmdXrange(true)},
	{name: "xdel", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", h: cmdXdel},
	{name: "xtrim", arity: -4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, group: "stream", summary: "Trims the stream to (approximately if '~' is passed) a certain size", h: cmdXtrim},
	{name: "xread", arity: -4, flags: flagReadonly | flagBlocking, firstKey: 0, lastKey: 0, step: 1, group: "stream", summary: "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", h: cmdXread},
	{name: "xreadgroup", arity: -7, flags: flagWrite | flagBlocking, firstKey: 0, lastKey: 0, step: 1, group: "stream", summary: "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", h: cmdXreadgroup},
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
	return resp.Raw(appendEntry(make([]byte, 0, n), id, fv))
}

// appendEntry appends one entry as entryReply encodes it.
func appendEntry(b []byte, id store.ID, fv [][]byte) []byte {
	b = append(b, "*2\r\n"...)
	var idb [48]byte
	b = resp.AppendBulk(b, id.Append(idb[:0]))
	b = resp.AppendArrayLen(b, len(fv))
	for _, v := range fv {
		b = resp.AppendBulk(b, v)
	}
	return b
}

// entriesReply is an array of stream entries (or of IDs, for XCLAIM JUSTID) encoded as the
// handler reads them, for the replies that can be large (XRANGE, XREAD, XREADGROUP, XCLAIM),
// into a recycled buffer (outbuf.go) that AppendRESP copies into the connection's output
// buffer, itself recycled once written. A value per entry, then the tree encoded into a fresh
// output buffer growing by quarters, made ~10 bytes of garbage per byte of a large reply. Like
// every handler reply it is encoded once: AppendRESP gives the buffer back.
type entriesReply struct {
	n     int
	proto int // for the null of a deleted entry (replyFromConsumerPEL)
	buf   []byte
	head  int // room kept at buf's start (entriesHead and more for XREAD's prefix)
	done  bool
	// prefix goes before the array: XREAD's one-stream reply, [[key, entries]] ({key:
	// entries} in RESP3), is the entries behind the key (streamsReply).
	prefix []byte
}

// entriesHead is the room kept at the start of an entriesReply's buffer for its array header
// ("*N\r\n", N < 2^31), so a reply that is the whole output can be handed over uncopied.
const entriesHead = 16

func newEntriesReply(proto int) *entriesReply { return newEntriesReplyRoom(proto, 0) }

// newEntriesReplyRoom keeps extra bytes more at the buffer's start, for a prefix (XREAD's key).
func newEntriesReplyRoom(proto, extra int) *entriesReply {
	head := entriesHead + extra
	b := getBuf(0)
	if cap(b) < head {
		b = make([]byte, 0, max(head, smallBuf))
	}
	return &entriesReply{proto: proto, buf: append(b, make([]byte, head)...), head: head}
}

// add appends one entry; addID one ID; addDeleted an ID whose entry is gone: [id, null].
func (e *entriesReply) add(id store.ID, fv [][]byte) {
	n := 64
	for _, v := range fv {
		n += len(v) + 16
	}
	e.room(n)
	e.buf = appendEntry(e.buf, id, fv)
	e.n++
}

// room makes n bytes free in buf, doubling it: append's growth by quarters past 256 bytes
// allocates about five times a large reply on the way, doubling about twice.
func (e *entriesReply) room(n int) {
	if len(e.buf)+n <= cap(e.buf) {
		return
	}
	nb := append(getBuf(max(2*cap(e.buf), len(e.buf)+n)), e.buf...)
	if cap(e.buf) <= smallOut {
		putBuf(e.buf) // a larger one, outgrown, would only hand the next reply a buffer to outgrow
	}
	e.buf = nb
}

func (e *entriesReply) addID(id store.ID) {
	e.buf = idValue(id).AppendRESP(e.buf, e.proto)
	e.n++
}

func (e *entriesReply) addDeleted(id store.ID) {
	e.buf = append(e.buf, "*2\r\n"...)
	e.buf = idValue(id).AppendRESP(e.buf, e.proto)
	e.buf = resp.AppendValue(e.buf, resp.NullArray, e.proto)
	e.n++
}

func (e *entriesReply) AppendRESP(b []byte, _ int) []byte {
	if e.done {
		return resp.AppendError(b, "ERR internal: reply encoded twice")
	}
	body := e.buf[e.head:]
	e.done = true
	if hdr := len(e.prefix) + len(resp.AppendArrayLen(nil, e.n)); len(b) == 0 && len(body) > smallOut && hdr <= e.head {
		// The whole output (XRANGE, XREVRANGE, a one-stream XREAD or XREADGROUP): the
		// header goes into the room kept before the entries and the buffer becomes the
		// output, instead of a copy of a reply that can be hundreds of MB. The empty b is the
		// connection's own: recycled.
		at := e.head - hdr
		resp.AppendArrayLen(append(e.buf[at:at], e.prefix...), e.n)
		out := e.buf[at:]
		e.buf = nil
		putBuf(b)
		return out
	}
	b = append(b, e.prefix...)
	if need := len(b) + 16 + len(body); need > cap(b) {
		// A recycled output buffer instead of append's fresh one; the old b is small (the
		// connection keeps at most smallOut) or owned by someone else (EXEC's body), so it
		// is not recycled here.
		b = append(getBuf(need), b...)
	}
	b = resp.AppendArrayLen(b, e.n)
	b = append(b, body...)
	putBuf(e.buf)
	e.buf = nil
	return b
}

// newStream returns an empty stream with the configured node limits.
func (s *Server) newStream() *store.Stream {
	st := store.NewStream()
	st.NodeMaxEntries = s.conf.streamNodeMaxEntries
	st.NodeMaxBytes = s.conf.streamNodeMaxBytes
	return st
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
