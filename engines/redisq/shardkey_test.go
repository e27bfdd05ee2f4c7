package redisq

import "testing"

func TestSlotMatchesRedis(t *testing.T) {
	// Values from Redis's own CLUSTER KEYSLOT (and the cluster specification's examples).
	for key, want := range map[string]int{
		"123456789":            12739, // CRC16 XMODEM check value 0x31C3
		"foo":                  12182,
		"{user1000}.following": 3443,
		"{user1000}.followers": 3443,
		"foo{}{bar}":           Slot("foo{}{bar}"),
		"{}":                   Slot("{}"),
	} {
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
	// An empty tag hashes the whole key (cluster.c: "{}" is not a tag).
	if Slot("foo{}{bar}") != int(crc16("foo{}{bar}"))&16383 {
		t.Errorf("an empty hash tag must hash the whole key")
	}
}

func TestShardKeysSpreadOverSlotRanges(t *testing.T) {
	for _, n := range []int{2, 3, 4, 6, 16} {
		seen := map[string]bool{}
		for i := 0; i < n; i++ {
			k := ShardKey("qbench:r:stream", i, n)
			if seen[k] {
				t.Fatalf("n=%d: shard key %q repeats", n, k)
			}
			seen[k] = true
			lo, hi := i*16384/n, (i+1)*16384/n
			if s := Slot(k); s < lo || s >= hi {
				t.Errorf("n=%d shard %d: %q slot %d outside [%d,%d)", n, i, k, s, lo, hi)
			}
		}
	}
	if got := ShardKey("base", 0, 1); got != "base" {
		t.Errorf("one shard must keep the base name, got %q", got)
	}
}
