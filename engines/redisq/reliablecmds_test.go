package redisq

import "testing"

// A move's reply is the element, a null bulk string (LMOVE found nothing) or a null array (a
// BLMOVE timed out: redis-server answers *-1); anything else is an error.
func TestMovedReply(t *testing.T) {
	cases := []struct {
		raw, want   string
		null, isErr bool
	}{
		{"$3\r\nabc\r\n", "abc", false, false},
		{"$-1\r\n", "", true, false},
		{"*-1\r\n", "", true, false},
		{"_\r\n", "", true, false},
		{"*1\r\n$1\r\na\r\n", "", false, true},
		{"-WRONGTYPE x\r\n", "", false, true},
		{"$3\r\nab", "", false, true},
	}
	for _, c := range cases {
		r := rawReply{b: []byte(c.raw)}
		v, null, err := r.moved()
		if string(v) != c.want || null != c.null || (err != nil) != c.isErr {
			t.Errorf("%q: got %q, null %v, err %v", c.raw, v, null, err)
		}
	}
}
