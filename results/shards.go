package results

import (
	"fmt"
	"io"
	"strings"
)

// ShardLag is one shard's part of the engine's lag when the queue is spread over several keys
// (scenario shards: N): its backlog and pending at the end of the run and the largest seen in
// the per-second readings, and what went through it (the engine's counts: messages producers
// pushed to it, deliveries consumers read from it). Backlog and pending sum to the engine's lag.
type ShardLag struct {
	Shard      int   `json:"shard"`
	Backlog    int64 `json:"backlog"`
	Pending    int64 `json:"pending"`
	MaxBacklog int64 `json:"max_backlog"`
	MaxPending int64 `json:"max_pending"`
	Sent       int64 `json:"sent"`
	Received   int64 `json:"received"`
}

// writeShards prints one line per shard, when there are several.
func writeShards(w io.Writer, shards []ShardLag) {
	if len(shards) <= 1 {
		return
	}
	var parts []string
	for _, s := range shards {
		parts = append(parts, fmt.Sprintf("#%d sent %d received %d backlog %d (max %d) pending %d (max %d)",
			s.Shard, s.Sent, s.Received, s.Backlog, s.MaxBacklog, s.Pending, s.MaxPending))
	}
	fmt.Fprintf(w, "per shard (%d): %s\n", len(shards), strings.Join(parts, "; "))
}
