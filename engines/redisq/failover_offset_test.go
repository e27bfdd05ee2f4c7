package redisq

import "testing"

// The promoted replica is the one with the highest slave_repl_offset, read from INFO replication.
func TestReplOffset(t *testing.T) {
	for _, tc := range []struct {
		info string
		want int64
		ok   bool
	}{
		{"# Replication\r\nrole:slave\r\nslave_repl_offset:4821\r\nslave_priority:100\r\n", 4821, true},
		{"# Replication\r\nrole:slave\r\nmaster_repl_offset:99\r\n", 0, false},
		{"slave_repl_offset:x\r\n", 0, false},
		{"", 0, false},
	} {
		got, ok := replOffset(tc.info)
		if got != tc.want || ok != tc.ok {
			t.Errorf("replOffset(%q) = %d, %v; want %d, %v", tc.info, got, ok, tc.want, tc.ok)
		}
	}
}
