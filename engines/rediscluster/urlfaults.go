package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines/redisq"
)

// Faults on an existing cluster (redis-cluster-url), carried out through the cluster's own
// commands: qbench starts no process there, so it can kill a node only by asking it to go
// (SHUTDOWN, DEBUG SEGFAULT) and can restart none. The nodes are found as a client finds them,
// in CLUSTER NODES. Each fault is checked before the run (newURL calls prepareURLFaults): a
// user without the permission, or a shard with no replica to promote, refuses the run with
// the reason rather than a fault row that only says it failed.

// view reads CLUSTER NODES through the client (from a node it knows to be up), or else from the
// first seed that answers.
func (e *engine) view(ctx context.Context) ([]nodeLine, error) {
	s, err := e.client.ClusterNodes(ctx).Result()
	if err == nil {
		return parseClusterNodes(s), nil
	}
	errs := []error{err}
	for _, a := range e.seeds {
		nodes, err := clusterNodes(ctx, e.dial(a))
		if err == nil {
			return nodes, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("CLUSTER NODES: no node answered: %w", errors.Join(errs...))
}

// shardNodes finds the primary serving slot and its replicas that are not failed.
func shardNodes(nodes []nodeLine, slot int) (primary nodeLine, replicas []nodeLine, err error) {
	i := slices.IndexFunc(nodes, func(n nodeLine) bool { return n.primary && !n.failed && n.serves(slot) })
	if i < 0 {
		return nodeLine{}, nil, fmt.Errorf("no healthy primary serves slot %d", slot)
	}
	primary = nodes[i]
	for _, n := range nodes {
		if !n.primary && n.master == primary.id && !n.failed && !n.noAddr && !n.handshake {
			replicas = append(replicas, n)
		}
	}
	return primary, replicas, nil
}

// liveAddrs are the addresses of the nodes not failed, without skip.
func liveAddrs(nodes []nodeLine, skip string) []string {
	var out []string
	for _, n := range nodes {
		if !n.failed && !n.noAddr && !n.handshake && n.addr != skip {
			out = append(out, n.addr)
		}
	}
	return out
}

// shardSlot is shard i's slot, shard 0's when i is out of range (as targetSlot).
func (e *engine) shardSlot(i int) int {
	if i < 0 || i >= len(e.shards) {
		i = 0
	}
	return e.shards[i].slot
}

// faultShards are the shards the run's faults of kind hit: Spec.FaultShards, or shard 0 for a
// spec that lists the kind without them.
func (e *engine) faultShards(kind string) []int {
	if s := e.spec.FaultShards[kind]; len(s) > 0 {
		return s
	}
	if slices.Contains(e.spec.Faults, kind) {
		return []int{0}
	}
	return nil
}

// prepareURLFaults checks, before the run, that the cluster lets each of the run's faults be
// carried out, and chooses how: every refusal is named, with its node and reason.
func (e *engine) prepareURLFaults(ctx context.Context) error {
	var errs []error
	if slices.Contains(e.spec.Faults, "stall") {
		errs = append(errs, e.prepareStall(ctx))
	}
	for _, shard := range e.faultShards("primary-kill") {
		errs = append(errs, e.preparePrimaryKill(ctx, shard))
	}
	return errors.Join(errs...)
}

// preparePrimaryKill checks that the primary serving shard's slot has a replica to promote and
// that this user may kill it: SHUTDOWN ABORT (which aborts nothing when no shutdown is under
// way, and is a syntax error before Redis 7.0) tells whether SHUTDOWN is allowed, DEBUG HELP
// whether DEBUG is. SHUTDOWN NOSAVE NOW is preferred (a clean exit without a crash report, NOW:
// without waiting for lagging replicas, Redis 7.0 and later); DEBUG SEGFAULT is the way where
// SHUTDOWN is refused and DEBUG enabled.
func (e *engine) preparePrimaryKill(ctx context.Context, shard int) error {
	slot := e.shardSlot(shard)
	nodes, err := e.view(ctx)
	if err != nil {
		return fmt.Errorf("primary-kill on shard %d: %w", shard, err)
	}
	primary, replicas, err := shardNodes(nodes, slot)
	if err != nil {
		return fmt.Errorf("primary-kill on shard %d: %w", shard, err)
	}
	if len(replicas) == 0 {
		return fmt.Errorf("primary-kill on shard %d: its primary %s (slot %d) has no replica to promote: killing it would take the shard down, and qbench cannot restart a node it did not start", shard, primary.addr, slot)
	}
	addr := e.dial(primary.addr)
	e.readNodeTimeout(ctx, addr)
	_, shutdownErr := nodeDo(ctx, addr, "SHUTDOWN", "ABORT")
	if redisq.Allowed(shutdownErr) {
		e.killBy = []string{"SHUTDOWN", "NOSAVE"}
		if info, err := nodeDo(ctx, addr, "INFO", "server"); err == nil && redisq.VersionAtLeast(redisq.InfoField(info, "redis_version"), 7, 0) {
			e.killBy = append(e.killBy, "NOW")
		}
		return nil
	}
	_, debugErr := nodeDo(ctx, addr, "DEBUG", "HELP")
	if redisq.Allowed(debugErr) {
		e.killBy = []string{"DEBUG", "SEGFAULT"}
		return nil
	}
	return fmt.Errorf("primary-kill on shard %d: the primary %s refuses both ways to kill it through the API: SHUTDOWN (probed with SHUTDOWN ABORT): %v; DEBUG SEGFAULT (probed with DEBUG HELP; needs enable-debug-command): %v",
		shard, primary.addr, shutdownErr, debugErr)
}

// readNodeTimeout reads the cluster's cluster-node-timeout from the node at addr, when this user
// may read it (CONFIG GET): the wait for a promotion after a kill is sized from it.
func (e *engine) readNodeTimeout(ctx context.Context, addr string) {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 300 * time.Millisecond,
		ReadTimeout: 2 * time.Second, ContextTimeoutEnabled: true, Protocol: 2})
	defer c.Close()
	v, err := c.ConfigGet(ctx, "cluster-node-timeout").Result()
	if err != nil {
		return
	}
	if ms, err := strconv.ParseInt(v["cluster-node-timeout"], 10, 64); err == nil && ms > 0 {
		e.nodeTimeout = time.Duration(ms) * time.Millisecond
	}
}

// urlPromoteLimit bounds the wait for an existing cluster's promotion after a kill (the other
// nodes mark the primary failed after cluster-node-timeout, Redis's default 15 s, then its
// replica waits a moment and is elected) or a CLUSTER FAILOVER: twice the timeout and 10 s, a
// minute when the timeout could not be read; the managed cluster's promoteLimit.
func (e *engine) urlPromoteLimit() time.Duration {
	if e.cluster != nil {
		return promoteLimit
	}
	if e.nodeTimeout <= 0 {
		return time.Minute
	}
	return max(promoteLimit, 2*e.nodeTimeout+10*time.Second)
}

// urlFailover is primary-kill on an existing cluster: the primary serving the target shard's
// slot is asked to go (killBy), then every other node is waited on until it sees a replica
// promoted and reports the cluster ok, and the client reloads its slot map. The killed node
// stays down: qbench did not start it and cannot start it again.
func (e *engine) urlFailover(ctx context.Context) error {
	slot := e.targetSlot()
	nodes, err := e.view(ctx)
	if err != nil {
		return err
	}
	primary, replicas, err := shardNodes(nodes, slot)
	if err != nil {
		return err
	}
	if len(replicas) == 0 {
		return fmt.Errorf("primary %s (slot %d) has no replica to promote; not killed", primary.addr, slot)
	}
	kill := e.killBy
	if len(kill) == 0 {
		kill = []string{"SHUTDOWN", "NOSAVE"}
	}
	how := strings.Join(kill, " ")
	if err := killNode(ctx, e.dial(primary.addr), kill); err != nil {
		return fmt.Errorf("%s on primary %s: %w", how, primary.addr, err)
	}
	others := liveAddrs(nodes, primary.addr)
	for i, a := range others {
		others[i] = e.dial(a)
	}
	err = waitPromoted(ctx, func() []string { return others }, e.dial, slot, primary.addr, e.urlPromoteLimit())
	e.reload(ctx)
	what := fmt.Sprintf("primary %s (%s; not restarted: qbench does not run it)", primary.addr, how)
	if err == nil && len(others) > 0 {
		if now, perr := primaryFor(ctx, others[0], slot); perr == nil {
			what += ", primary now " + now
		}
	}
	e.lastFailover.Store(&what)
	return err
}

// LastFailover names what the last primary-kill hit (engines.FailoverReporter).
func (e *engine) LastFailover() string {
	if p := e.lastFailover.Load(); p != nil {
		return *p
	}
	return ""
}

// killNode sends a command that ends the node (SHUTDOWN, DEBUG SEGFAULT) and waits until it no
// longer answers. A reply, rather than the connection closing, is the node refusing
// (SHUTDOWN's "Errors trying to SHUTDOWN", a NOPERM).
func killNode(ctx context.Context, addr string, cmd []string) error {
	args := make([]any, len(cmd))
	for i, a := range cmd {
		args[i] = a
	}
	_, err := nodeDo(ctx, addr, args...)
	var re redis.Error
	if err == nil || errors.As(err, &re) {
		if err == nil {
			err = errors.New("the node answered and went on")
		}
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := nodeDo(ctx, addr, "PING"); err != nil && !errors.As(err, &re) {
			return nil // no answer: gone
		}
		if time.Now().After(deadline) {
			return errors.New("the node still answers 10 s later")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// prepareStall checks that every primary lets this user pause its clients: CLIENT PAUSE 0 ALL,
// a pause that ends at once (Redis 6.2 and later, +client|pause).
func (e *engine) prepareStall(ctx context.Context) error {
	return e.client.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		if err := c.Do(ctx, "CLIENT", "PAUSE", "0", "ALL").Err(); err != nil {
			return fmt.Errorf("a stall is CLIENT PAUSE <ms> ALL on every primary (Redis 6.2 or later, a user allowed +client|pause); the primary %s refused it: %w", c.Options().Addr, err)
		}
		return nil
	})
}

// Stall pauses every primary's normal clients for d (engines.Staller): CLIENT PAUSE <ms> ALL,
// sent to all primaries at once. The nodes themselves go on: the cluster bus, replication and
// persistence, so no failover follows. It returns once every primary has answered.
func (e *engine) Stall(ctx context.Context, d time.Duration) error {
	ms := strconv.FormatInt(max(d.Milliseconds(), 1), 10)
	return e.client.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		if err := c.Do(ctx, "CLIENT", "PAUSE", ms, "ALL").Err(); err != nil {
			return fmt.Errorf("CLIENT PAUSE %s ALL on %s: %w", ms, c.Options().Addr, err)
		}
		return nil
	})
}
