// Package resp reads Redis commands (multibulk and inline) and appends RESP2/RESP3 replies.
// It knows nothing about commands; the limits and error strings are Redis 7.0's.
package resp

import (
	"errors"
	"io"
	"unsafe"
)

// Redis's limits (server.h / networking.c, 7.0).
const (
	// DefaultMaxBulkLen is proto-max-bulk-len's default, 512mb.
	DefaultMaxBulkLen = 512 << 20
	// InlineMaxSize is PROTO_INLINE_MAX_SIZE: the longest inline command or count line.
	InlineMaxSize = 64 << 10
	// unauthenticated clients may send at most this many arguments, each at most unauthBulkLen.
	unauthMultibulkLen = 10
	unauthBulkLen      = 16384
)

// ProtocolError is a malformed request. Its text is what Redis replies (after "-ERR "); Redis
// closes the connection after sending it.
type ProtocolError string

func (e ProtocolError) Error() string { return "ERR Protocol error: " + string(e) }

// The protocol errors Redis 7.0 sends, byte for byte (without the "ERR Protocol error: " prefix).
const (
	ErrInvalidMultibulkLen = ProtocolError("invalid multibulk length")
	ErrUnauthMultibulkLen  = ProtocolError("unauthenticated multibulk length")
	ErrInvalidBulkLen      = ProtocolError("invalid bulk length")
	ErrUnauthBulkLen       = ProtocolError("unauthenticated bulk length")
	ErrTooBigMultibulk     = ProtocolError("too big mbulk count string")
	ErrTooBigBulkCount     = ProtocolError("too big bulk count string")
	ErrTooBigInline        = ProtocolError("too big inline request")
	ErrUnbalancedQuotes    = ProtocolError("unbalanced quotes in request")
)

func errExpectedDollar(c byte) ProtocolError {
	return ProtocolError("expected '$', got '" + string([]byte{c}) + "'")
}

// Reader parses commands from a connection. Arguments returned by Next and ReadCommand alias the
// reader's buffer and stay valid only until the next call that may read from the connection
// (ReadCommand or Fill).
type Reader struct {
	rd   io.Reader
	buf  []byte
	r, w int // unparsed bytes are buf[r:w]
	raw  []byte

	// MaxBulkLen is proto-max-bulk-len; 0 means DefaultMaxBulkLen.
	MaxBulkLen int64
	// Unauthenticated applies Redis's tighter limits for clients that have not authenticated.
	Unauthenticated bool

	args     [][]byte
	argsUsed int // args's slots that may hold arguments (the last command's length)
	// need is how many unparsed bytes the pending command needs at least (its bulk lengths
	// are known), so a large argument arriving in pieces is not re-parsed on every read.
	need int
	// needBulk is the length of the bulk need waits for.
	needBulk int

	// The multibulk being parsed, kept across reads as Redis keeps c->multibulklen and
	// c->bulklen: a command of many arguments arriving in pieces is parsed once, not from its
	// start on every read. Offsets are from r.r, so compaction does not move them.
	mbLeft int64 // arguments still to parse; 0 = no multibulk in progress
	mbPos  int   // bytes of the command parsed so far
	mbOffs []int // start, end of each argument parsed so far

	// work counts bytes examined by the parser (tests bound it).
	work int64
}

// NewReader returns a Reader on rd.
func NewReader(rd io.Reader) *Reader {
	return &Reader{rd: rd, buf: make([]byte, 16<<10)}
}

// SetSource makes the reader read from rd from now on, keeping what is buffered (a connection
// that moves from the event loop to its own goroutine).
func (r *Reader) SetSource(rd io.Reader) { r.rd = rd }

// Buffered is the number of received bytes not yet parsed.
func (r *Reader) Buffered() int { return r.w - r.r }

// Raw is the exact bytes of the last command returned (for the append-only file).
func (r *Reader) Raw() []byte { return r.raw }

// Feed appends bytes received elsewhere (for example while the connection was blocked).
func (r *Reader) Feed(p []byte) {
	r.makeRoom(len(p))
	r.w += copy(r.buf[r.w:], p)
}

// AdoptMin is the least argument length Adopt takes over.
const AdoptMin = 1 << 20

// Adopt hands a, an argument of the command just returned, over to the caller for good when it
// is at least AdoptMin long and fills at least half of the reader's buffer (a large value that
// arrived alone): the reader goes on in a fresh buffer, with a copy of what it holds unparsed,
// and never writes to the old one again, so the value needs no copy of its own (Redis adopts
// its query buffer likewise). It reports whether it did; if not, the caller must copy a.
func (r *Reader) Adopt(a []byte) bool {
	if len(a) < AdoptMin || 2*len(a) < len(r.buf) {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(r.buf)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	if p < lo || p+uintptr(len(a)) > lo+uintptr(len(r.buf)) {
		return false // not ours (a queued copy, a replayed record)
	}
	rest := r.w - r.r
	nb := make([]byte, max(16<<10, rest))
	copy(nb, r.buf[r.r:r.w])
	// Parse state is kept relative to r.r, so a partly parsed command carries over. The
	// returned arguments and raw stay valid: the old buffer is now theirs.
	r.buf, r.r, r.w = nb, 0, rest
	return true
}

// Next parses one command from what is already buffered, without reading. ok is false when no
// complete command is buffered. Empty commands (blank inline lines, "*0") are skipped.
func (r *Reader) Next() (args [][]byte, ok bool, err error) {
	for r.r < r.w {
		if r.w-r.r < r.need {
			return nil, false, nil
		}
		args, n, err := r.parse(r.buf[r.r:r.w])
		if err != nil {
			return nil, false, err
		}
		if n == 0 {
			return nil, false, nil
		}
		r.need = 0
		r.raw = r.buf[r.r : r.r+n]
		r.r += n
		if len(args) == 0 {
			continue
		}
		return args, true, nil
	}
	return nil, false, nil
}

// ReadCommand returns the next command, reading from the connection as needed.
func (r *Reader) ReadCommand() ([][]byte, error) {
	for {
		args, ok, err := r.Next()
		if err != nil || ok {
			return args, err
		}
		if err := r.Fill(); err != nil {
			return nil, err
		}
	}
}

// Fill reads once from the connection into the buffer.
func (r *Reader) Fill() error {
	if r.r == r.w && len(r.buf) > 1<<20 {
		// A huge argument grew the buffer; do not keep it for the connection's life (nor
		// through the last command's argument slices, which alias it).
		r.buf, r.r, r.w, r.raw = make([]byte, 16<<10), 0, 0, nil
		clear(r.args[:cap(r.args)])
	} else if r.r == r.w {
		// All consumed: read into the whole buffer, not the 4 KB or so left after the last
		// command. A read that fills its room may leave bytes in the socket, which costs the
		// event loop (edge-triggered) a read of its own next turn; pipelined batches are ~5 KB.
		r.r, r.w, r.raw = 0, 0, nil
	}
	// Room for a read of 4 KB: an announced length reserves memory only as its bytes arrive,
	// the buffer doubling when (nearly) full, so it is never more than twice what arrived.
	// Asking room for as much as had arrived made it double once half full: up to 4x (40 MB
	// of a 512 MB bulk held a 128 MB buffer). For a large argument (bigPending), never past
	// the command's end, where makeRoom's sizes end.
	room := 4096
	if rest := r.need - (r.w - r.r); rest > 0 && rest < room && r.bigPending() {
		room = rest
	}
	r.makeRoom(room)
	n, err := r.rd.Read(r.buf[r.w:])
	r.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// Full reports whether the buffer has no room left after what was read: after Fill, that its
// read took all the room it had (Fill always makes room first), so the source may hold more.
func (r *Reader) Full() bool { return r.w == len(r.buf) }

// makeRoom makes at least n bytes free after w, compacting before growing.
func (r *Reader) makeRoom(n int) {
	if len(r.buf)-r.w >= n {
		return
	}
	if r.r > 0 {
		copy(r.buf, r.buf[r.r:r.w])
		r.w -= r.r
		r.r = 0
		r.raw = nil
		if len(r.buf)-r.w >= n {
			return
		}
	}
	size := max(2*len(r.buf), r.w+n)
	if r.bigPending() {
		// Doubling, but along the sizes end/2^k, where end is where the pending argument ends:
		// the last growth goes from half the command to all of it, never past it (a 150 MB
		// argument left a 256 MB buffer), and the buffers outgrown on the way add up to half
		// the command, not the 128 MB and more of powers of two short of 150 MB. Only for an
		// argument at least as large as all the command holds so far: for a command of many
		// smaller arguments it would grow the buffer an argument at a time, copying it each
		// time (quadratic); here each copy is at most the argument. (Fill asks no room past end.)
		end := r.r + r.need
		s := end
		for s/2 >= r.w+n {
			s /= 2
		}
		size = max(s, r.w+n)
	}
	nb := make([]byte, size)
	copy(nb, r.buf[:r.w])
	r.buf = nb
}

// bigPending says the pending command waits for an argument at least as large as the rest
// of the command (makeRoom grows the buffer towards the command's end for it).
func (r *Reader) bigPending() bool {
	return r.need > 0 && r.needBulk >= r.need-r.needBulk-2
}

// parse parses one command at the start of b. n == 0 with a nil error means incomplete.
func (r *Reader) parse(b []byte) (args [][]byte, n int, err error) {
	if b[0] != '*' {
		return r.parseInline(b)
	}
	maxBulk := r.MaxBulkLen
	if maxBulk <= 0 {
		maxBulk = DefaultMaxBulkLen
	}
	if r.mbLeft == 0 {
		// The count line: Redis looks for '\r' and assumes '\n' follows.
		cr := indexByte(b, '\r')
		r.work += int64(max(cr+1, len(b)))
		if cr < 0 {
			if len(b) > InlineMaxSize {
				return nil, 0, ErrTooBigMultibulk
			}
			return nil, 0, nil
		}
		if cr > len(b)-2 {
			return nil, 0, nil
		}
		count, ok := parseInt(b[1:cr])
		if !ok || count > 1<<31-1 {
			return nil, 0, ErrInvalidMultibulkLen
		}
		if count > unauthMultibulkLen && r.Unauthenticated {
			return nil, 0, ErrUnauthMultibulkLen
		}
		if count <= 0 {
			return nil, cr + 2, nil
		}
		r.mbLeft, r.mbPos, r.mbOffs = count, cr+2, r.mbOffs[:0]
	}
	for r.mbLeft > 0 {
		pos := r.mbPos
		rest := b[pos:]
		cr := indexByte(rest, '\r')
		if cr < 0 {
			r.work += int64(len(rest))
			if len(rest) > InlineMaxSize {
				return nil, 0, ErrTooBigBulkCount
			}
			return nil, 0, nil
		}
		r.work += int64(cr + 1)
		if cr > len(rest)-2 {
			return nil, 0, nil
		}
		if rest[0] != '$' {
			r.mbLeft = 0
			return nil, 0, errExpectedDollar(rest[0])
		}
		l, ok := parseInt(rest[1:cr])
		if !ok || l < 0 || l > maxBulk {
			r.mbLeft = 0
			return nil, 0, ErrInvalidBulkLen
		}
		if l > unauthBulkLen && r.Unauthenticated {
			r.mbLeft = 0
			return nil, 0, ErrUnauthBulkLen
		}
		start := pos + cr + 2
		if int64(len(b)-start) < l+2 {
			r.need, r.needBulk = start+int(l)+2, int(l)
			return nil, 0, nil
		}
		end := start + int(l)
		r.mbOffs = append(r.mbOffs, start, end)
		r.mbPos = end + 2 // Redis skips the two bytes after the payload without checking them
		r.mbLeft--
	}
	args = r.args[:0]
	for i := 0; i < len(r.mbOffs); i += 2 {
		args = append(args, b[r.mbOffs[i]:r.mbOffs[i+1]:r.mbOffs[i+1]])
	}
	// The slots past this command's arguments may still hold an earlier command's, which can
	// alias a buffer the reader no longer uses: a 150 MB value's query buffer, adopted by SET
	// (Adopt), stayed reachable after a DEL of the value, and was never freed.
	// Only up to the last command's length: the rest were cleared before (O(arguments) a command).
	if r.argsUsed > len(args) {
		clear(args[len(args):r.argsUsed])
	}
	r.args, r.argsUsed = args, len(args)
	if cap(r.mbOffs) > 1<<16 {
		r.mbOffs = nil // a huge command's offsets are not kept for the connection's life
	}
	return args, r.mbPos, nil
}

func (r *Reader) parseInline(b []byte) ([][]byte, int, error) {
	nl := indexByte(b, '\n')
	// Redis finds the newline with strchr, which stops at the first NUL: a NUL before the
	// newline means "no newline yet", and Redis waits for more (up to the inline limit).
	if nl >= 0 && indexByte(b[:nl], 0) >= 0 {
		nl = -1
	}
	r.work += int64(len(b))
	if nl < 0 {
		if len(b) > InlineMaxSize {
			return nil, 0, ErrTooBigInline
		}
		return nil, 0, nil
	}
	line := b[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	args, ok := SplitArgs(line)
	if !ok {
		return nil, 0, ErrUnbalancedQuotes
	}
	return args, nl + 1, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// parseInt is Redis's string2ll: optional '-', no '+', no leading zeros, no spaces, 64-bit range.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	if b[0] == '-' {
		neg = true
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// ParseInt parses an integer argument the way Redis's string2ll does.
func ParseInt(b []byte) (int64, bool) { return parseInt(b) }

// SplitArgs splits an inline command like Redis's sdssplitargs: spaces separate arguments,
// "double quotes" understand \n \r \t \b \a \\ \" and \xHH, 'single quotes' only \'. A closing
// quote must be followed by a space or the end. ok is false for unbalanced quotes.
func SplitArgs(line []byte) (args [][]byte, ok bool) {
	p := 0
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p >= len(line) {
			return args, true
		}
		var cur []byte
		inq, insq, done := false, false, false
		for !done {
			if inq {
				if p >= len(line) {
					return nil, false
				}
				c := line[p]
				switch {
				case c == '\\' && p+3 < len(line) && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]):
					cur = append(cur, hexVal(line[p+2])*16+hexVal(line[p+3]))
					p += 3
				case c == '\\' && p+1 < len(line):
					p++
					switch line[p] {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, line[p])
					}
				case c == '"':
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return nil, false
					}
					done = true
				default:
					cur = append(cur, c)
				}
			} else if insq {
				if p >= len(line) {
					return nil, false
				}
				c := line[p]
				switch {
				case c == '\\' && p+1 < len(line) && line[p+1] == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return nil, false
					}
					done = true
				default:
					cur = append(cur, c)
				}
			} else {
				if p >= len(line) {
					break
				}
				switch c := line[p]; c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if p < len(line) {
				p++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}
func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// IsProtocolError reports whether err is a malformed request (reply, then close).
func IsProtocolError(err error) bool {
	var pe ProtocolError
	return errors.As(err, &pe)
}
