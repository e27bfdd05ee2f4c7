package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestDiffRedisListEdit compares LREM on lists spanning many of our chunks (and Redis's
// quicklist nodes): matches at the head, the tail, the middle and across node boundaries,
// count 1, -1, 2, -2, 0 and past the matches, the reliable-list ack pattern, and the key
// deleted when the list empties; and LSET, LINSERT and LTRIM, which also edit in place.
func TestDiffRedisListEdit(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	// fill pushes n elements named by name(i), padded to size bytes, in batches.
	fill := func(cmd string, n, size int, name func(i int) string) []string {
		var lines []string
		for i := 0; i < n; {
			args := []string{cmd, "l"}
			for j := 0; j < 50 && i < n; j, i = j+1, i+1 {
				args = append(args, pad(name(i), size))
			}
			lines = append(lines, strings.Join(args, " "))
		}
		return lines
	}
	check := []string{"LLEN l", "LRANGE l 0 9", "LRANGE l -10 -1", "LINDEX l 500", "EXISTS l"}
	abc := func(i int) string { return string(rune('a' + i%3)) }
	edits := func(size int) []string {
		a, b, c := pad("a", size), pad("b", size), pad("c", size)
		return []string{
			"LREM l 1 " + a, "LREM l -1 " + a, "LREM l 2 " + b, "LREM l -2 " + c, "LREM l 0 nomatch",
			"LREM l -300 " + c, "LRANGE l 0 -1", "LREM l 0 " + b, "LLEN l", "LRANGE l 0 -1", "LREM l 0 " + a,
			"LREM l 0 " + c, "EXISTS l", "LREM l 1 " + a,
		}
	}
	var ack []string // LPUSH at the head, LREM -1 of the oldest at the tail, as the design does
	ack = append(ack, fill("LPUSH", 3000, 40, func(i int) string { return fmt.Sprint("m", i) })...)
	for i := 0; i < 3000; i += 7 {
		ack = append(ack, fmt.Sprintf("LPUSH l %s", pad(fmt.Sprint("m", 3000+i), 40)),
			fmt.Sprintf("LREM l -1 %s", pad(fmt.Sprint("m", i), 40)),
			fmt.Sprintf("LREM l 1 %s", pad(fmt.Sprint("m", i+3), 40)))
	}
	ack = append(ack, check...)
	cases := []struct {
		name  string
		lines []string
	}{
		{"small-rpush", append(append(fill("RPUSH", 2000, 1, abc), check...), edits(1)...)},
		{"small-lpush", append(append(fill("LPUSH", 2000, 1, abc), check...), edits(1)...)},
		{"padded", append(append(fill("RPUSH", 900, 100, abc), check...), edits(100)...)},
		{"big", append(append(fill("RPUSH", 30, 9000, abc), check...), edits(9000)...)},
		{"mixed-pushes", append(append(append(fill("RPUSH", 600, 30, abc), fill("LPUSH", 600, 30, abc)...), check...), edits(30)...)},
		{"ack", ack},
		{"lset-linsert-ltrim", append(append(fill("RPUSH", 1500, 20, abc), check...), setInsertTrim()...)},
		{"lset-linsert-ltrim-lpush", append(append(fill("LPUSH", 1500, 20, abc), check...), setInsertTrim()...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runDiff(t, realAddr, s.Addr(), tc.lines) })
	}
}

// pad makes a script word of name padded with '.' to size bytes.
func pad(name string, size int) string {
	if len(name) >= size {
		return name
	}
	return name + strings.Repeat(".", size-len(name))
}

// setInsertTrim edits a list of 1500 20-byte elements: LSET to the same, a smaller and a larger
// size (up to a block of its own), LINSERT before and after pivots at both ends and in the
// middle, then LTRIM from both ends.
func setInsertTrim() []string {
	big := pad("B", 9000)
	lines := []string{
		"LSET l 0 " + pad("S0", 20), "LSET l -1 x", "LSET l 700 " + pad("M", 3000), "LSET l 701 " + big,
		"LSET l 702 " + pad("s", 1), "LSET l 1500 x", "LSET l -1501 x", "LSET nokey 0 x",
		"LINSERT l BEFORE " + pad("S0", 20) + " first", "LINSERT l AFTER x last", "LINSERT l AFTER " + big + " afterbig",
		"LINSERT l BEFORE " + pad("M", 3000) + " " + pad("I", 5000), "LINSERT l AFTER s " + big,
		"LINSERT l BEFORE " + pad("c", 20) + " cc",
	}
	for i := 0; i < 60; i++ { // many inserts at one pivot: its chunk fills and splits
		lines = append(lines, fmt.Sprintf("LINSERT l AFTER %s %s", pad("M", 3000), pad(fmt.Sprint("n", i), 200)))
	}
	return append(lines, "LLEN l", "LRANGE l 0 -1", "LTRIM l 3 -4", "LRANGE l 0 20", "LRANGE l -20 -1",
		"LTRIM l 400 -300", "LLEN l", "LRANGE l 0 -1", "LTRIM l 1 0", "EXISTS l")
}
