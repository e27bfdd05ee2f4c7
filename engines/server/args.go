package server

import (
	"crypto/rand"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// parseInt is Redis's string2ll (strict: no spaces, no '+', no leading zeros).
func parseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }

// intArg parses an integer argument or returns Redis's generic error.
func intArg(b []byte) (int64, error) {
	n, ok := parseInt(b)
	if !ok {
		return 0, errNotInteger
	}
	return n, nil
}

// parseFloat is Redis's string2ld: no surrounding spaces, no NaN.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 5000 || isSpaceByte(b[0]) || isSpaceByte(b[len(b)-1]) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return 0, false
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// eq compares an argument with a lower-case keyword, ignoring case.
func eq(arg []byte, kw string) bool {
	if len(arg) != len(kw) {
		return false
	}
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != kw[i] {
			return false
		}
	}
	return true
}

// getList returns the list at key, nil if missing, or WRONGTYPE.
func (c *client) getList(key []byte) (*store.List, error) {
	v := c.keyspace().GetBytes(key)
	if v == nil {
		return nil, nil
	}
	l, ok := v.(*store.List)
	if !ok {
		return nil, errWrongType
	}
	return l, nil
}

// getStream returns the stream at key, nil if missing, or WRONGTYPE.
func (c *client) getStream(key []byte) (*store.Stream, error) {
	v := c.keyspace().GetBytes(key)
	if v == nil {
		return nil, nil
	}
	st, ok := v.(*store.Stream)
	if !ok {
		return nil, errWrongType
	}
	return st, nil
}

// clone copies an argument that the store will keep (arguments alias the read buffer).
func clone(b []byte) []byte { return append([]byte(nil), b...) }

func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	rand.Read(b)
	return hex.EncodeToString(b)[:n]
}
