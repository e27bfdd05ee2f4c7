package redisq

import "testing"

// The sweep pages a stream with an exclusive start computed from the last ID seen, so that it
// works on every Redis-protocol server (XRANGE's "(" needs 6.2).
func TestNextStreamID(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0-0", "0-1"},
		{"1700000000000-5", "1700000000000-6"},
		{"12-18446744073709551615", "13-0"},
		{"bad", "-"},
	} {
		if got := nextStreamID(c.in); got != c.want {
			t.Errorf("nextStreamID(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
