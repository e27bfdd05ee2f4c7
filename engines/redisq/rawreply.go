package redisq

import (
	"errors"
	"fmt"
	"strconv"
)

// rawReply reads one RESP2 or RESP3 reply from the raw bytes go-redis's DoRaw / DoRawWriteTo
// give. The consumer paths read their replies with it rather than through go-redis's typed or
// generic replies, which allocate a string, an interface and (for streams) a map per element:
// here a payload is a slice of the reply buffer.
type rawReply struct {
	b   []byte
	pos int
}

var errRawShort = errors.New("redis reply: truncated")

// line returns the next CRLF-terminated line, without the CRLF.
func (r *rawReply) line() ([]byte, error) {
	for i := r.pos; i+1 < len(r.b); i++ {
		if r.b[i] == '\r' && r.b[i+1] == '\n' {
			l := r.b[r.pos:i]
			r.pos = i + 2
			if len(l) == 0 {
				return nil, fmt.Errorf("redis reply: empty line")
			}
			return l, nil
		}
	}
	return nil, errRawShort
}

// header reads a type byte and its length or value line. A server error becomes an error.
func (r *rawReply) header() (typ byte, rest []byte, err error) {
	l, err := r.line()
	if err != nil {
		return 0, nil, err
	}
	switch l[0] {
	case '-':
		return 0, nil, redisErr(string(l[1:]))
	case '!':
		n, err := strconv.Atoi(string(l[1:]))
		if err != nil || n < 0 || r.pos+n+2 > len(r.b) {
			return 0, nil, errRawShort
		}
		msg := string(r.b[r.pos : r.pos+n])
		r.pos += n + 2
		return 0, nil, redisErr(msg)
	}
	return l[0], l[1:], nil
}

// redisErr is a server's error reply; like go-redis's own, it is a redis.Error.
type redisErr string

func (e redisErr) Error() string { return string(e) }
func (e redisErr) RedisError()   {}

// array reads an array (or set, or push) header and returns its length; null reports a null
// array (RESP2 *-1, RESP3 _). A map (RESP3 %) is returned as an array of 2n elements, keys and
// values alternating, which is how RESP2 sends the same replies.
func (r *rawReply) array() (n int, null bool, err error) {
	typ, rest, err := r.header()
	if err != nil {
		return 0, false, err
	}
	switch typ {
	case '_':
		return 0, true, nil
	case '*', '~', '>', '%':
		n, err := strconv.Atoi(string(rest))
		if err != nil {
			return 0, false, fmt.Errorf("redis reply: bad length %q", rest)
		}
		if n < 0 {
			return 0, true, nil
		}
		if typ == '%' {
			n *= 2
		}
		return n, false, nil
	}
	return 0, false, fmt.Errorf("redis reply: expected an array, got %q", typ)
}

// bulk reads a bulk or simple string; null reports a null one.
func (r *rawReply) bulk() (b []byte, null bool, err error) {
	typ, rest, err := r.header()
	if err != nil {
		return nil, false, err
	}
	switch typ {
	case '_':
		return nil, true, nil
	case '+':
		return rest, false, nil
	case '$', '=':
		n, err := strconv.Atoi(string(rest))
		if err != nil {
			return nil, false, fmt.Errorf("redis reply: bad length %q", rest)
		}
		if n < 0 {
			return nil, true, nil
		}
		if r.pos+n+2 > len(r.b) {
			return nil, false, errRawShort
		}
		b := r.b[r.pos : r.pos+n : r.pos+n]
		r.pos += n + 2
		return b, false, nil
	}
	return nil, false, fmt.Errorf("redis reply: expected a string, got %q", typ)
}

// skip reads and discards one value of any type.
func (r *rawReply) skip() error {
	start := r.pos
	typ, rest, err := r.header()
	if err != nil {
		return err
	}
	switch typ {
	case '$', '=':
		r.pos = start
		_, _, err := r.bulk()
		return err
	case '*', '~', '>', '%':
		r.pos = start
		n, _, err := r.array()
		for i := 0; i < n && err == nil; i++ {
			err = r.skip()
		}
		return err
	case '|': // RESP3 attributes precede the value they describe
		n, err := strconv.Atoi(string(rest))
		for i := 0; i < 2*n && err == nil; i++ {
			err = r.skip()
		}
		if err != nil {
			return err
		}
		return r.skip()
	}
	return nil // a one-line value: +, :, ,, #, (, _
}
