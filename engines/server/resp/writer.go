package resp

import (
	"math"
	"strconv"
)

// Reply values. A handler returns one of these (or a plain Go value: nil is a null bulk string,
// []byte and string are bulk strings, int and int64 integers, error an error reply) and
// AppendValue encodes it for the connection's protocol version.
type (
	// Simple is a status reply: +OK.
	Simple string
	// Error is an error reply; the text includes its code ("ERR ...", "WRONGTYPE ...").
	Error string
	// Array is an array reply.
	Array []any
	// Map is alternating keys and values: a RESP3 map, a flat array in RESP2.
	Map []any
	// Set is a RESP3 set, an array in RESP2.
	Set []any
	// Push is an out-of-band message (pub/sub): '>' in RESP3, an array in RESP2.
	Push []any
	// Double is a RESP3 double, a bulk string in RESP2.
	Double float64
	// Bool is a RESP3 boolean, the integer 1 or 0 in RESP2.
	Bool bool
	// Verbatim is a RESP3 verbatim string ("txt"), a bulk string in RESP2.
	Verbatim string
	// Raw is already-encoded protocol, written as is.
	Raw []byte
)

// Appender is a reply that encodes itself (for values that would otherwise need converting).
type Appender interface {
	AppendRESP(b []byte, proto int) []byte
}

type nullArray struct{}
type null struct{}

// NullArray is "*-1" in RESP2 (a missing multi-bulk, as from a timed-out BLPOP); "_" in RESP3.
var NullArray any = nullArray{}

// Null is "$-1" in RESP2, "_" in RESP3 (the same as a nil reply).
var Null any = null{}

// OK is the +OK status.
const OK = Simple("OK")

func (e Error) Error() string { return string(e) }

// AppendValue appends v encoded for protocol version proto (2 or 3).
func AppendValue(b []byte, v any, proto int) []byte {
	switch v := v.(type) {
	case nil:
		return AppendNull(b, proto)
	case null:
		return AppendNull(b, proto)
	case nullArray:
		if proto >= 3 {
			return append(b, "_\r\n"...)
		}
		return append(b, "*-1\r\n"...)
	case []byte:
		return AppendBulk(b, v)
	case string:
		return AppendBulkString(b, v)
	case Simple:
		return AppendSimple(b, string(v))
	case int:
		return AppendInt(b, int64(v))
	case int64:
		return AppendInt(b, v)
	case uint64:
		return AppendInt(b, int64(v))
	case Error:
		return AppendError(b, string(v))
	case error:
		return AppendError(b, v.Error())
	case Array:
		return appendValues(AppendArrayLen(b, len(v)), v, proto)
	case [][]byte:
		b = AppendArrayLen(b, len(v))
		for _, e := range v {
			b = AppendBulk(b, e)
		}
		return b
	case []string:
		b = AppendArrayLen(b, len(v))
		for _, e := range v {
			b = AppendBulkString(b, e)
		}
		return b
	case Map:
		if proto >= 3 {
			return appendValues(appendLen(b, '%', len(v)/2), v, proto)
		}
		return appendValues(AppendArrayLen(b, len(v)), v, proto)
	case Set:
		return appendValues(appendAggregateLen(b, '~', len(v), proto), v, proto)
	case Push:
		return appendValues(appendAggregateLen(b, '>', len(v), proto), v, proto)
	case Double:
		if proto >= 3 {
			b = append(b, ',')
			b = appendDouble(b, float64(v))
			return append(b, '\r', '\n')
		}
		return AppendBulk(b, appendDouble(nil, float64(v)))
	case Bool:
		if proto >= 3 {
			if v {
				return append(b, "#t\r\n"...)
			}
			return append(b, "#f\r\n"...)
		}
		if v {
			return AppendInt(b, 1)
		}
		return AppendInt(b, 0)
	case Verbatim:
		if proto >= 3 {
			b = appendLen(b, '=', len(v)+4)
			b = append(b, "txt:"...)
			b = append(b, v...)
			return append(b, '\r', '\n')
		}
		return AppendBulkString(b, string(v))
	case Raw:
		return append(b, v...)
	case Appender:
		return v.AppendRESP(b, proto)
	default:
		return AppendError(b, "ERR internal: unknown reply type")
	}
}

func appendDouble(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}

func appendLen(b []byte, c byte, n int) []byte {
	b = append(b, c)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// AppendArrayLen appends an array header.
func AppendArrayLen(b []byte, n int) []byte { return appendLen(b, '*', n) }

// AppendBulk appends a bulk string.
func AppendBulk(b, p []byte) []byte {
	b = appendLen(b, '$', len(p))
	b = append(b, p...)
	return append(b, '\r', '\n')
}

// AppendBulkString appends a bulk string.
func AppendBulkString(b []byte, s string) []byte {
	b = appendLen(b, '$', len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendInt appends an integer reply.
func AppendInt(b []byte, n int64) []byte {
	b = append(b, ':')
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// AppendSimple appends a status reply. Newlines would break the protocol; Redis replaces them.
func AppendSimple(b []byte, s string) []byte {
	b = append(b, '+')
	b = appendNoNewlines(b, s)
	return append(b, '\r', '\n')
}

// AppendError appends an error reply. s includes the code ("ERR ...").
func AppendError(b []byte, s string) []byte {
	b = append(b, '-')
	b = appendNoNewlines(b, s)
	return append(b, '\r', '\n')
}

func appendNoNewlines(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}

// AppendNull appends a null: "$-1" in RESP2, "_" in RESP3.
func AppendNull(b []byte, proto int) []byte {
	if proto >= 3 {
		return append(b, "_\r\n"...)
	}
	return append(b, "$-1\r\n"...)
}

// appendAggregateLen writes the header of a RESP3 aggregate of type c ('~' set, '>' push) with n
// elements, or of an array in RESP2.
func appendAggregateLen(b []byte, c byte, n, proto int) []byte {
	if proto >= 3 {
		return appendLen(b, c, n)
	}
	return AppendArrayLen(b, n)
}

// appendValues writes each of vs as AppendValue does.
func appendValues(b []byte, vs []any, proto int) []byte {
	for _, e := range vs {
		b = AppendValue(b, e, proto)
	}
	return b
}
