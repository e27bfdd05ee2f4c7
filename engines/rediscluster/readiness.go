package rediscluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Replication readiness: a primary with min-replicas-to-write k refuses every write (NOREPLICAS)
// while fewer than k of its replicas are "good", that is in state online with their last
// REPLCONF ACK within min-replicas-max-lag seconds. cluster_state:ok and the replicas' own
// master_link_status:up do not imply it: the primary may still be in a (re)sync with them
// (state wait_bgsave) when the replica side already reads up, so a run's set-up writes right
// after the cluster came up could be refused. StartCluster waits for the primaries' own view.

// readyLag is the largest ACK age, in seconds, a replica may show to count as ready here: INFO
// reports whole seconds since the last ACK, which replicas send every second, so 0 or 1 is a
// replica that is streaming; Redis's own bound (min-replicas-max-lag, 10 s by default) is looser.
const readyLag = 1

// replicaLine is one slaveN: line of a primary's INFO replication.
type replicaLine struct {
	addr  string
	state string
	lag   int
}

// replication is what INFO replication says about a node's replicas.
type replication struct {
	role      string // master or slave
	connected int    // connected_slaves
	// good is min_slaves_good_slaves, the count Redis checks against min-replicas-to-write; -1
	// when the node does not report it (it does only while min-replicas-to-write is set).
	good     int
	replicas []replicaLine
}

// parseReplication reads INFO replication's role, connected_slaves, min_slaves_good_slaves and
// slaveN:ip=...,port=...,state=...,offset=...,lag=... lines.
func parseReplication(info string) (replication, error) {
	r := replication{good: -1}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case k == "role":
			r.role = v
		case k == "connected_slaves":
			n, err := strconv.Atoi(v)
			if err != nil {
				return r, fmt.Errorf("connected_slaves %q: %v", v, err)
			}
			r.connected = n
		case k == "min_slaves_good_slaves":
			n, err := strconv.Atoi(v)
			if err != nil {
				return r, fmt.Errorf("min_slaves_good_slaves %q: %v", v, err)
			}
			r.good = n
		case strings.HasPrefix(k, "slave") && strings.Contains(v, "state="):
			rl := replicaLine{lag: -1}
			var ip, port string
			for _, kv := range strings.Split(v, ",") {
				f, val, _ := strings.Cut(kv, "=")
				switch f {
				case "ip":
					ip = val
				case "port":
					port = val
				case "state":
					rl.state = val
				case "lag":
					n, err := strconv.Atoi(val)
					if err != nil {
						return r, fmt.Errorf("%s lag %q: %v", k, val, err)
					}
					rl.lag = n
				}
			}
			rl.addr = ip + ":" + port
			r.replicas = append(r.replicas, rl)
		}
	}
	if r.role == "" {
		return r, fmt.Errorf("no role: line in INFO replication")
	}
	return r, nil
}

// ready is nil when a primary has at least want replicas online with an ACK at most readyLag
// seconds old (and, when it reports it, at least want good replicas), else why not.
func (r replication) ready(want int) error {
	online := 0
	var behind []string
	for _, rl := range r.replicas {
		if rl.state == "online" && rl.lag >= 0 && rl.lag <= readyLag {
			online++
			continue
		}
		behind = append(behind, fmt.Sprintf("%s state=%s lag=%d", rl.addr, rl.state, rl.lag))
	}
	switch {
	case r.connected < want:
		return fmt.Errorf("connected_slaves:%d, want %d", r.connected, want)
	case online < want:
		return fmt.Errorf("%d of %d replicas online with lag <= %d s, want %d (%s)", online, len(r.replicas), readyLag, want, strings.Join(behind, "; "))
	case r.good >= 0 && r.good < want:
		return fmt.Errorf("min_slaves_good_slaves:%d, want %d", r.good, want)
	}
	return nil
}

// WaitReplicasReady waits until every running primary reports at least want replicas online and
// acknowledging (ready), within limit, so that a min-replicas-to-write up to want can be met by
// the first write. The error on timeout names the primary and what it reported.
func (c *Cluster) WaitReplicasReady(ctx context.Context, want int, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		last := c.replicasReady(ctx, want)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redis cluster: replicas not ready within %s: %v", limit, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) replicasReady(ctx context.Context, want int) error {
	primaries := 0
	for _, n := range c.running() {
		info, err := nodeDo(ctx, n.Addr(), "INFO", "replication")
		if err != nil {
			return err
		}
		r, err := parseReplication(info)
		if err != nil {
			return fmt.Errorf("primary %s: %v", n.Addr(), err)
		}
		if r.role != "master" {
			continue
		}
		primaries++
		if err := r.ready(want); err != nil {
			return fmt.Errorf("primary %s: %v", n.Addr(), err)
		}
	}
	if primaries < c.Primaries {
		return fmt.Errorf("%d nodes report role:master, want %d", primaries, c.Primaries)
	}
	return nil
}

// noReplicasRetry bounds how long set-up retries writes a primary refuses with NOREPLICAS. A
// managed cluster is ready before set-up (StartCluster); an existing one (redis-cluster-url) may
// be a moment short of good replicas (a replica resyncing, an ACK not yet counted: Redis
// recounts every second), but not for longer than its min-replicas-max-lag unless a replica is
// missing, which waiting does not cure.
var noReplicasRetry = 12 * time.Second

// setupShard runs one shard's set-up, retrying NOREPLICAS refusals within noReplicasRetry (the
// designs' set-up is idempotent: a group that exists is kept), then says what the primary
// reports.
func (e *engine) setupShard(ctx context.Context, s shard) error {
	deadline := time.Now().Add(noReplicasRetry)
	for {
		err := s.d.Setup(ctx)
		if err == nil || !strings.HasPrefix(err.Error(), "NOREPLICAS") {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("set-up of shard %s (slot %d): %w (retried for %s); %s", strings.TrimSuffix(s.key, ":"), s.slot, err, noReplicasRetry, e.replicasReport(ctx, s))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("set-up of shard %s (slot %d): %w", strings.TrimSuffix(s.key, ":"), s.slot, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// replicasReport says why the primary owning s refuses writes: its min-replicas settings against
// the replicas it counts.
func (e *engine) replicasReport(ctx context.Context, s shard) string {
	node, err := e.client.MasterForKey(ctx, s.key)
	if err != nil {
		return "its primary is unknown: " + err.Error()
	}
	addr := node.Options().Addr
	cfg, _ := node.ConfigGet(ctx, "min-replicas-*").Result()
	info, err := node.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Sprintf("primary %s: INFO replication: %v", addr, err)
	}
	r, err := parseReplication(info)
	if err != nil {
		return fmt.Sprintf("primary %s: %v", addr, err)
	}
	var lines []string
	for _, rl := range r.replicas {
		lines = append(lines, fmt.Sprintf("%s state=%s lag=%d", rl.addr, rl.state, rl.lag))
	}
	return fmt.Sprintf("primary %s has min-replicas-to-write %s and min-replicas-max-lag %s s but counts %d good of %d connected replicas [%s]: give it replicas that keep up, or lower min-replicas-to-write there",
		addr, cfg["min-replicas-to-write"], cfg["min-replicas-max-lag"], max(r.good, 0), r.connected, strings.Join(lines, "; "))
}
