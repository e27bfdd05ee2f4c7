package redisq

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// The leader-move fault on redis-url: FAILOVER (Redis 6.2 and later) hands the primary's role to
// one of its replicas without losing a write: the primary pauses writes (CLIENT PAUSE WRITE),
// waits until the replica has all of its stream, becomes that replica's replica and lets its
// clients go, who are then answered READONLY. qbench follows the move: its connections are dialed
// through a follower, which dials whichever server is primary now and, once the move is over,
// closes every connection it dialed, so that each is dialed again to the new primary (a closed
// connection is a network error, on which the pool and the dedicated connections reconnect).

// urlEngine is redis-url: the shared engine plus the leader move, which only a server with
// replicas of its own can make.
type urlEngine struct {
	*engine
	// follow dials the current primary; nil when the run has no leader-move.
	follow *follower
}

// failoverLimit bounds the wait for a replica to catch up (FAILOVER's TIMEOUT, after which the
// primary aborts and goes on) and, with room, the whole move.
const failoverLimit = 10 * time.Second

// follower dials whichever server is primary now and can close every connection it dialed.
type follower struct {
	mu    sync.Mutex
	addr  string
	conns map[*followedConn]struct{}
}

func newFollower(addr string) *follower {
	return &follower{addr: addr, conns: map[*followedConn]struct{}{}}
}

// current is the address connections are dialed to.
func (f *follower) current() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addr
}

// wrap makes dial go to the current address and keep track of what it opened.
func (f *follower) wrap(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		for {
			addr := f.current()
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			fc := &followedConn{Conn: c, f: f}
			f.mu.Lock()
			moved := f.addr != addr // a move while it was dialed: dial the new primary
			if !moved {
				f.conns[fc] = struct{}{}
			}
			f.mu.Unlock()
			if !moved {
				return fc, nil
			}
			c.Close()
		}
	}
}

// moveTo makes addr the address new connections go to and closes every connection open now.
func (f *follower) moveTo(addr string) {
	f.mu.Lock()
	f.addr = addr
	open := f.conns
	f.conns = map[*followedConn]struct{}{}
	f.mu.Unlock()
	for c := range open {
		c.shut()
	}
}

// shut ends the connection as a server's close would: the socket is shut down both ways (reads
// return EOF, as after a server's death, which go-redis handles as such) and the client closes
// it itself.
func (c *followedConn) shut() {
	if s, ok := c.Conn.(interface {
		CloseRead() error
		CloseWrite() error
	}); ok {
		s.CloseWrite()
		s.CloseRead()
		return
	}
	c.Conn.Close()
}

// followedConn is a connection the follower dialed; closing it forgets it.
type followedConn struct {
	net.Conn
	f *follower
}

func (c *followedConn) Close() error {
	c.f.mu.Lock()
	delete(c.f.conns, c)
	c.f.mu.Unlock()
	return c.Conn.Close()
}

// NetConn is the connection underneath, as crypto/tls names it: go-redis's pool checks an idle
// connection's socket through it.
func (c *followedConn) NetConn() net.Conn { return c.Conn }

// nodeClient is a client of one connection to addr with the engine's credentials and TLS,
// dialed directly (not through the follower).
func (u *urlEngine) nodeClient(addr string) *redis.Client {
	o := *u.client.Options()
	o.Addr, o.Dialer, o.OnConnect = addr, nil, nil
	o.PoolSize, o.MinIdleConns = 1, 0
	o.MaxRetries = -1
	return redis.NewClient(&o)
}

// replicaLine is one replica as its primary's INFO replication lists it (slave0:ip=...,port=...).
type replicaLine struct {
	addr   string
	online bool
	offset int64
}

// replicasOf reads the replicas from an INFO replication reply.
func replicasOf(info string) []replicaLine {
	var out []replicaLine
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(k, "slave") || strings.Trim(k[len("slave"):], "0123456789") != "" || k == "slave" {
			continue
		}
		var r replicaLine
		var ip, port string
		for _, kv := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(kv, "=")
			switch name {
			case "ip":
				ip = val
			case "port":
				port = val
			case "state":
				r.online = val == "online"
			case "offset":
				r.offset, _ = strconv.ParseInt(val, 10, 64)
			}
		}
		r.addr = net.JoinHostPort(ip, port)
		out = append(out, r)
	}
	return out
}

// bestReplica is the online replica with the highest offset, false when none is online.
func bestReplica(info string) (replicaLine, bool) {
	var best replicaLine
	found := false
	for _, r := range replicasOf(info) {
		if r.online && (!found || r.offset > best.offset) {
			best, found = r, true
		}
	}
	return best, found
}

// prepareLeaderMove checks before the run that the server can hand its role over and qbench can
// follow: Redis 6.2 or later, a primary outside cluster mode, a replica online and answering
// from here (qbench dials it once it is primary), and a user allowed FAILOVER (probed with
// FAILOVER ABORT, which aborts nothing when no failover is under way).
func (u *urlEngine) prepareLeaderMove(ctx context.Context) error {
	addr := u.follow.current()
	c := u.nodeClient(addr)
	defer c.Close()
	server, err := c.Info(ctx, "server").Result()
	if err != nil {
		return fmt.Errorf("leader-move: INFO server at %s: %w", addr, err)
	}
	version := InfoField(server, "redis_version")
	if !VersionAtLeast(version, 6, 2) {
		return fmt.Errorf("leader-move is FAILOVER, which needs Redis 6.2 or later; the server at %s is redis_version %s", addr, version)
	}
	if InfoField(server, "redis_mode") == "cluster" {
		return fmt.Errorf("leader-move: the server at %s is a cluster node: FAILOVER is not allowed in cluster mode (use redis-cluster-url, whose leader-move is CLUSTER FAILOVER)", addr)
	}
	repl, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Errorf("leader-move: INFO replication at %s: %w", addr, err)
	}
	if role := InfoField(repl, "role"); role != "master" {
		return fmt.Errorf("leader-move: the server at %s is not a primary (role:%s): give the primary's address", addr, role)
	}
	best, ok := bestReplica(repl)
	if !ok {
		return fmt.Errorf("leader-move: the primary at %s has no replica online (connected_slaves:%s): FAILOVER needs one to hand its role to", addr, InfoField(repl, "connected_slaves"))
	}
	rc := u.nodeClient(best.addr)
	perr := rc.Ping(ctx).Err()
	rc.Close()
	if perr != nil {
		return fmt.Errorf("leader-move: the replica %s (as the primary at %s lists it) does not answer from here, so qbench could not follow the move: %v", best.addr, addr, perr)
	}
	if err := c.Do(ctx, "FAILOVER", "ABORT").Err(); !Allowed(err) {
		return fmt.Errorf("leader-move: the server at %s refuses FAILOVER to this user (probed with FAILOVER ABORT): %v", addr, err)
	}
	return nil
}

// MoveLeader hands the primary's role to its most advanced online replica (engines.LeaderMover):
// FAILOVER TO host port TIMEOUT, then INFO replication is polled until the old primary reports
// the failover over (master_failover_state:no-failover) as a replica; if it is still primary the
// replica did not catch up in time and the move was aborted. Then every connection is moved to
// the new primary, which is asked to confirm its role.
func (u *urlEngine) MoveLeader(ctx context.Context) (engines.LeaderMove, error) {
	if u.follow == nil {
		return engines.LeaderMove{}, errors.New("leader-move was not prepared: the run did not list it")
	}
	old := u.follow.current()
	mv := engines.LeaderMove{From: old}
	c := u.nodeClient(old)
	defer c.Close()
	repl, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return mv, err
	}
	target, ok := bestReplica(repl)
	if !ok {
		return mv, fmt.Errorf("the primary at %s has no replica online", old)
	}
	host, port, _ := net.SplitHostPort(target.addr)
	ms := strconv.FormatInt(failoverLimit.Milliseconds(), 10)
	if err := c.Do(ctx, "FAILOVER", "TO", host, port, "TIMEOUT", ms).Err(); err != nil {
		return mv, fmt.Errorf("FAILOVER TO %s TIMEOUT %s: %w", target.addr, ms, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 3*failoverLimit)
	defer cancel()
	for {
		repl, err := c.Info(wctx, "replication").Result()
		if err == nil && InfoField(repl, "master_failover_state") == "no-failover" {
			if InfoField(repl, "role") != "slave" {
				return mv, fmt.Errorf("FAILOVER aborted: the replica %s did not catch up within %s; %s goes on as primary", target.addr, failoverLimit, old)
			}
			break
		}
		select {
		case <-wctx.Done():
			return mv, fmt.Errorf("FAILOVER to %s not over within %s (last: %v)", target.addr, 3*failoverLimit, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	u.follow.moveTo(target.addr)
	mv.To = target.addr
	nc := u.nodeClient(target.addr)
	defer nc.Close()
	for {
		repl, err := nc.Info(wctx, "replication").Result()
		if err == nil && InfoField(repl, "role") == "master" {
			return mv, nil
		}
		select {
		case <-wctx.Done():
			return mv, fmt.Errorf("%s did not report itself primary after FAILOVER (last: %v)", target.addr, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
