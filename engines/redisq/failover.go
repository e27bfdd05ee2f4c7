package redisq

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// A managed primary with asynchronous replicas, and the failover fault: the primary is killed
// without warning, the replica with the highest replication offset is promoted (REPLICAOF NO ONE), and producers and consumers
// move to it. Writes the primary acknowledged and had not yet sent to the replica are lost;
// WAIT numreplicas after each batch shrinks that window.

// replicated is the set of servers behind one engine; current is where clients connect.
type replicated struct {
	primary  *ManagedRedis
	replicas []*ManagedRedis
	current  atomic.Pointer[string]
}

func newReplicatedEngine(ctx context.Context, spec engines.Spec, primary *ManagedRedis) (engines.Engine, error) {
	set := &replicated{primary: primary}
	addr := primary.Addr()
	set.current.Store(&addr)
	for i := 0; i < spec.Replicas; i++ {
		cfg := map[string]string{}
		for k, v := range spec.Persistence {
			cfg[k] = v
		}
		cfg["replicaof"] = "127.0.0.1 " + strconv.Itoa(primary.Port)
		r, err := StartRedis(ctx, "", cfg)
		if err != nil {
			set.stop()
			return nil, fmt.Errorf("replica %d: %w", i, err)
		}
		set.replicas = append(set.replicas, r)
		if err := waitLinkUp(ctx, r.Addr()); err != nil {
			set.stop()
			return nil, fmt.Errorf("replica %d: %w", i, err)
		}
	}
	// Every connection dials whichever server is current, so after a failover the pool's new
	// connections reach the promoted replica.
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	opts := &redis.Options{
		Addr: addr,
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, *set.current.Load())
		},
	}
	e, err := newEngineWith(ctx, spec, "redis", opts)
	if err != nil {
		set.stop()
		return nil, err
	}
	e.closeTarget = set.stop
	e.pid = func() string { return strconv.Itoa(set.primary.PID()) }
	return &replicatedEngine{managedEngine{engine: e, server: set.primary}, set}, nil
}

// replicatedEngine is a managed primary with replicas: it crashes and restarts like a managed
// redis-server (the primary), and can also fail over.
type replicatedEngine struct {
	managedEngine
	set *replicated
}

// Failover kills the primary and moves clients to a promoted replica (engines.FailoverTarget).
func (e *replicatedEngine) Failover(ctx context.Context) error { return e.set.failover(ctx) }

func (s *replicated) stop() error {
	var errs []error
	for _, r := range s.replicas {
		errs = append(errs, r.Stop())
	}
	if s.primary != nil {
		errs = append(errs, s.primary.Stop())
	}
	return errors.Join(errs...)
}

// failover kills the primary and promotes the replica that had received the most of its
// stream (the highest replication offset, as Redis Sentinel chooses); the old primary stays
// down. Promoting a replica that was behind another made the other's partial resync fail (its
// offset is past the new primary's history): it then waited for a full sync, which Redis 7.0
// delays 5 s by default (repl-diskless-sync-delay), so WAIT 1 failed for the rest of a run.
func (s *replicated) failover(ctx context.Context) error {
	if len(s.replicas) == 0 {
		return errors.New("failover needs replicas: 1 or more")
	}
	if err := s.primary.Kill(); err != nil {
		return err
	}
	best := mostAdvanced(ctx, s.replicas)
	s.replicas[0], s.replicas[best] = s.replicas[best], s.replicas[0]
	next := s.replicas[0]
	c := redis.NewClient(&redis.Options{Addr: next.Addr()})
	defer c.Close()
	if err := c.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("promoting %s: %w", next.Addr(), err)
	}
	// The other replicas follow the new primary.
	for _, r := range s.replicas[1:] {
		rc := redis.NewClient(&redis.Options{Addr: r.Addr()})
		err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", strconv.Itoa(next.Port)).Err()
		rc.Close()
		if err != nil {
			return err
		}
	}
	addr := next.Addr()
	s.current.Store(&addr)
	old := s.primary
	s.primary, s.replicas = next, append(s.replicas[1:], old)
	return nil
}

// mostAdvanced is the index of the replica with the highest replication offset
// (slave_repl_offset in INFO replication); the first when none answers.
func mostAdvanced(ctx context.Context, replicas []*ManagedRedis) int {
	best, bestOffset := 0, int64(-1)
	for i, r := range replicas {
		c := redis.NewClient(&redis.Options{Addr: r.Addr()})
		info, err := c.Info(ctx, "replication").Result()
		c.Close()
		if err != nil {
			continue
		}
		if off, ok := replOffset(info); ok && off > bestOffset {
			best, bestOffset = i, off
		}
	}
	return best
}

// replOffset reads slave_repl_offset from an INFO replication reply.
func replOffset(info string) (int64, bool) {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "slave_repl_offset:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// waitLinkUp waits until a replica reports its link to the primary up (the initial sync done).
func waitLinkUp(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		info, err := c.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("replication link not up within 10 s")
}
