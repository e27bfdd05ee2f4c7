package results

import (
	"bytes"
	"testing"
)

// The summary has a per-shard line only when the queue was spread over several shards.
func TestSummaryPerShardLine(t *testing.T) {
	cases := []struct {
		name   string
		shards []ShardLag
		want   string // "" means no per-shard line
	}{
		{"none", nil, ""},
		{"one", []ShardLag{{Shard: 0, Sent: 5}}, ""},
		{"two", []ShardLag{{Shard: 0, Sent: 7, Received: 6, Backlog: 1, MaxBacklog: 3}, {Shard: 1, Sent: 2, Received: 2, Pending: 4, MaxPending: 9}},
			"per shard (2): #0 sent 7 received 6 backlog 1 (max 3) pending 0 (max 0); #1 sent 2 received 2 backlog 0 (max 0) pending 4 (max 9)\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			writeShards(&b, c.shards)
			if b.String() != c.want {
				t.Fatalf("got %q, want %q", b.String(), c.want)
			}
		})
	}
}
