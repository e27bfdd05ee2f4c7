package scenarios

import (
	"strings"
	"testing"
)

// The cluster fault kinds and fields: accepted where they make sense, refused with file, line and
// field otherwise.
func TestClusterFields(t *testing.T) {
	for _, c := range []struct {
		name, yaml, want string // want "" means accepted
	}{
		{"primary-kill", "rate: 10\nengine: redis-cluster\nfaults:\n  - at: 1s\n    kind: primary-kill\n", ""},
		{"node-restart", "rate: 10\nengine: redis-cluster\nfaults:\n  - at: 1s\n    kind: node-restart\n    duration: 2s\n", ""},
		// A restart at once (duration 0) is allowed: Kafka restarts a broker that way.
		{"node-restart at once", "rate: 10\nengine: redis-cluster\nfaults:\n  - at: 1s\n    kind: node-restart\n", ""},
		{"node-restart negative", "rate: 10\nengine: redis-cluster\nfaults:\n  - at: 1s\n    kind: node-restart\n    duration: -1s\n", "bad.yaml:6: faults.0.duration: must not be negative"},
		{"replicas per primary", "rate: 10\nengine: redis-cluster\nreplicas: 2\n", ""},
		{"replicas elsewhere", "rate: 10\nengine: redis-cluster-url\naddress: 127.0.0.1:7000\nreplicas: 1\n", "bad.yaml:4: replicas: engine redis-cluster-url does not read replicas (engines that do: redis, redis-cluster)"},
		{"shard", "rate: 10\nengine: redis-cluster\nshards: 3\nfaults:\n  - at: 1s\n    kind: primary-kill\n    shard: 2\n", ""},
		{"shard out of range", "rate: 10\nengine: redis-cluster\nshards: 3\nfaults:\n  - at: 1s\n    kind: primary-kill\n    shard: 3\n", "bad.yaml:7: faults.0.shard: must name a shard, 0 to shards-1 (got 3)"},
		{"shard on another fault", "rate: 10\nengine: redis-cluster\nfaults:\n  - at: 1s\n    kind: stall\n    duration: 1s\n    shard: 1\n", "faults.0.shard: a stall does not take shard (only primary-kill, node-restart, partition, leader-move do)"},
		{"partition", "rate: 10\nengine: redis-cluster\nshards: 3\nfaults:\n  - {at: 1s, kind: partition, duration: 3s, shard: 2}\n", ""},
		{"partition needs a duration", "rate: 10\nengine: redis-cluster\nfaults:\n  - {at: 1s, kind: partition}\n", "bad.yaml:4: faults.0.duration: a partition needs a positive duration"},
		{"partition on one server", "rate: 10\nengine: redis\nfaults:\n  - {at: 1s, kind: partition, duration: 1s}\n", "engine redis cannot carry out fault kind partition"},
		{"replicas behind", "rate: 10\nengine: redis-cluster\nduration: 10s\nfaults:\n  - {at: 2s, kind: primary-kill, replicas_behind: 500ms}\n", ""},
		{"replicas behind on kafka", "rate: 10\nengine: kafka\nduration: 10s\nfaults:\n  - {at: 2s, kind: partition-leader-kill, duration: 2s, replicas_behind: 500ms}\n", ""},
		{"replicas behind on a partition", "rate: 10\nengine: redis-cluster\nfaults:\n  - {at: 1s, kind: partition, duration: 1s, replicas_behind: 1s}\n",
			"bad.yaml:4: faults.0.replicas_behind: a partition does not take replicas_behind (only primary-kill and partition-leader-kill do)"},
		{"replicas behind negative", "rate: 10\nengine: redis-cluster\nfaults:\n  - {at: 1s, kind: primary-kill, replicas_behind: -1s}\n", "faults.0.replicas_behind: must not be negative (got -1s)"},
		{"replicas behind past the end", "rate: 10\nengine: redis-cluster\nduration: 10s\nfaults:\n  - {at: 8s, kind: primary-kill, replicas_behind: 2s}\n",
			"faults.0.replicas_behind: the kill would come at 10s, not before the run's end at 10s; hold them for less than 2s"},
		// The hold occupies the engine: a fault due before the kill would fire late.
		{"replicas behind overlaps", "rate: 10\nengine: redis-cluster\nduration: 10s\nfaults:\n  - {at: 1s, kind: primary-kill, replicas_behind: 2s}\n  - {at: 2s, kind: node-restart}\n",
			"faults.1.at: node-restart at 2s overlaps faults.0"},
		{"seeds needed", "rate: 10\nengine: redis-cluster-url\n", "address"},
		{"leader-move on a shard", "rate: 10\nengine: redis-cluster-url\naddress: 127.0.0.1:7000\nshards: 3\nduration: 10s\nfaults:\n  - {at: 2s, kind: leader-move, shard: 2}\n", ""},
		{"leader-move takes no duration", "rate: 10\nengine: redis-url\naddress: 127.0.0.1:6379\nduration: 10s\nfaults:\n  - {at: 2s, kind: leader-move, duration: 1s}\n",
			"faults.0.duration: a leader-move takes no duration: its window ends when writes go to the new leader (got 1s)"},
		{"no leader-move on redis", "rate: 10\nengine: redis\nduration: 10s\nfaults:\n  - {at: 2s, kind: leader-move}\n", "engine redis cannot carry out fault kind leader-move"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(c.yaml), testChecks)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && err == nil:
				t.Fatal("accepted")
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q\nwant it to contain %q", err, c.want)
			}
		})
	}
}
