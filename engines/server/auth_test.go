package server

import "testing"

// TestPasswordMatches: AUTH compares SHA-256 digests (equal lengths whatever the password's),
// so it accepts exactly the password: not a prefix, an extension, or one differing in a byte.
func TestPasswordMatches(t *testing.T) {
	const want = "s3cret-password"
	for _, tc := range []struct {
		pass string
		ok   bool
	}{
		{want, true}, {"", false}, {"s3cret", false}, {want + "x", false}, {"S3cret-password", false},
		{want + "\x00", false},
	} {
		if got := passwordMatches([]byte(tc.pass), want); got != tc.ok {
			t.Errorf("passwordMatches(%q) = %v, want %v", tc.pass, got, tc.ok)
		}
	}
}
