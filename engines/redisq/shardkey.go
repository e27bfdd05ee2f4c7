package redisq

import "strconv"

// ShardKey names shard i of n of a run's key base (a stream, list or channel name). With one
// shard the base is used as it is. With more, each name carries a Redis Cluster hash tag chosen
// so that the n shards' slots are spread evenly over the 16,384 slots: shard i hashes into the
// i-th n-th of the slot space, so a cluster whose primaries own equal contiguous ranges (what
// `redis-cli --cluster create` makes) gets its shards dealt over every primary. On a single
// server the tag is only part of the name.
func ShardKey(base string, i, n int) string {
	if n <= 1 {
		return base
	}
	return base + ":{" + shardTag(i, n) + "}"
}

// shardTag is the first tag "s<i>-<k>", k = 0, 1, ..., whose slot falls in shard i's range.
func shardTag(i, n int) string {
	lo, hi := i*slotCount/n, (i+1)*slotCount/n
	for k := 0; ; k++ {
		tag := "s" + strconv.Itoa(i) + "-" + strconv.Itoa(k)
		if s := Slot(tag); s >= lo && s < hi {
			return tag
		}
	}
}

const slotCount = 16384

// Slot is Redis Cluster's key slot of key: CRC16 (XMODEM) of the hash tag, or of the whole key
// when it has none, modulo 16384 (cluster.c keyHashSlot).
func Slot(key string) int {
	if s := indexByte(key, '{'); s >= 0 {
		if e := indexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	return int(crc16(key)) & (slotCount - 1)
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), Redis's crc16.c.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
