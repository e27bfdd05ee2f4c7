package sentinelq

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines/procs"
	"qbench/engines/redisq"
)

// SentinelEnv names the environment variable that overrides which redis-sentinel to run.
const SentinelEnv = "QBENCH_REDIS_SENTINEL"

// The Sentinels' settings: three of them, two needed to agree that the primary is down, a
// primary unanswered for a second down, and a failover given 3 s before another may start
// (failover-timeout; a failed one is retried after twice that).
const (
	masterName      = "qbench"
	sentinels       = 3
	quorum          = 2
	downAfterMs     = 1000
	failoverTimeout = 3000
	// DefaultReplicas is the number of replicas without replicas: in the scenario. Two, so that
	// the promoted one still has a replica, which min-replicas-to-write 1 needs to accept writes.
	DefaultReplicas = 2
	// readyLimit bounds each wait of the start-up: replicas synced, Sentinels agreed.
	readyLimit = 20 * time.Second
)

// SentinelPath is the redis-sentinel to run: $QBENCH_REDIS_SENTINEL, or redis-sentinel on PATH
// (Debian's redis-sentinel package: a link to the server binary, which runs as a Sentinel under
// that name), or else redis-server, which runs as one with --sentinel.
func SentinelPath() (string, error) {
	if bin := os.Getenv(SentinelEnv); bin != "" {
		return bin, nil
	}
	if bin, err := exec.LookPath("redis-sentinel"); err == nil {
		return bin, nil
	}
	if bin, err := redisq.RedisServerPath(); err == nil {
		return bin, nil
	}
	return "", fmt.Errorf("neither redis-sentinel nor redis-server found on PATH (install Debian's redis-sentinel, or set %s)", SentinelEnv)
}

// topology is the servers behind one engine: the primary qbench started (behind the proxy), its
// replicas, and the Sentinels watching them.
type topology struct {
	primary  *redisq.ManagedRedis
	replicas []*redisq.ManagedRedis
	proxy    *proxy
	watchers []*watcher
}

// watcher is one Sentinel process, its directory (its config file, which it rewrites) and a
// client asking it where the primary is.
type watcher struct {
	proc   *procs.Proc
	port   int
	dir    string
	client *redis.SentinelClient
}

func (w *watcher) addr() string { return "127.0.0.1:" + strconv.Itoa(w.port) }

// startTopology starts the primary behind the proxy, n replicas of it, then the Sentinels, and
// waits until the replicas are in sync and every Sentinel knows both the replicas and the
// other Sentinels: only then can a failover be agreed and carried out.
func startTopology(ctx context.Context, persistence map[string]string, n int) (*topology, error) {
	sbin, err := SentinelPath()
	if err != nil {
		return nil, err
	}
	px, err := newProxy()
	if err != nil {
		return nil, err
	}
	t := &topology{proxy: px}
	node := func(extra map[string]string) map[string]string {
		cfg := map[string]string{
			// Any node may become primary, so every node gets the scenario's persistence
			// (min-replicas-to-write included), and a replica that must sync in full (the old
			// primary after the heal) is served at once, not after Redis's 5 s default delay.
			"repl-diskless-sync-delay": "0",
		}
		for k, v := range persistence {
			cfg[k] = v
		}
		for k, v := range extra {
			cfg[k] = v
		}
		return cfg
	}
	// As a replica (after the heal) the primary announces the proxy, the address the Sentinels
	// already know it by.
	t.primary, err = redisq.StartRedis(ctx, "", node(map[string]string{"replica-announce-port": strconv.Itoa(px.port)}))
	if err != nil {
		t.stop()
		return nil, fmt.Errorf("primary: %w", err)
	}
	px.start(t.primary.Addr())
	for i := range n {
		r, err := redisq.StartRedis(ctx, "", node(map[string]string{"replicaof": "127.0.0.1 " + strconv.Itoa(px.port)}))
		if err != nil {
			t.stop()
			return nil, fmt.Errorf("replica %d: %w", i, err)
		}
		t.replicas = append(t.replicas, r)
	}
	if err := waitReplicasOnline(ctx, t.primary.Addr(), n); err != nil {
		t.stop()
		return nil, err
	}
	ports, err := procs.FreePorts(sentinels)
	if err != nil {
		t.stop()
		return nil, err
	}
	for _, port := range ports {
		w, err := startWatcher(ctx, sbin, port, px.addr())
		if err != nil {
			t.stop()
			return nil, err
		}
		t.watchers = append(t.watchers, w)
	}
	if err := t.waitAgreed(ctx, n); err != nil {
		t.stop()
		return nil, err
	}
	return t, nil
}

// startWatcher starts one Sentinel on port, monitoring the primary at monitor (the proxy).
func startWatcher(ctx context.Context, bin string, port int, monitor string) (*watcher, error) {
	dir, err := os.MkdirTemp("", "qbench-sentinel-")
	if err != nil {
		return nil, err
	}
	w := &watcher{port: port, dir: dir}
	host, mport, _ := net.SplitHostPort(monitor)
	conf := fmt.Sprintf(`port %d
bind 127.0.0.1
protected-mode no
daemonize no
dir %s
sentinel monitor %s %s %s %d
sentinel down-after-milliseconds %s %d
sentinel failover-timeout %s %d
sentinel parallel-syncs %s %d
`, port, dir, masterName, host, mport, quorum, masterName, downAfterMs, masterName, failoverTimeout, masterName, DefaultReplicas)
	file := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		w.stop()
		return nil, err
	}
	// --sentinel makes the server binary a Sentinel whatever its name.
	w.proc, err = procs.Start(procs.Command{Path: bin, Args: []string{file, "--sentinel"}})
	if err != nil {
		w.stop()
		return nil, err
	}
	w.client = redis.NewSentinelClient(&redis.Options{Addr: w.addr(), DialTimeout: 500 * time.Millisecond,
		ReadTimeout: time.Second, MaxRetries: -1, PoolSize: 4})
	rctx, cancel := context.WithTimeout(ctx, readyLimit)
	defer cancel()
	if err := w.proc.WaitReady(rctx, 20*time.Millisecond, func(ctx context.Context) error { return w.client.Ping(ctx).Err() }); err != nil {
		w.stop()
		return nil, fmt.Errorf("sentinel on %d: %w", port, err)
	}
	return w, nil
}

func (w *watcher) stop() error {
	var errs []error
	if w.client != nil {
		errs = append(errs, w.client.Close())
	}
	if w.proc != nil {
		errs = append(errs, w.proc.Stop(5*time.Second))
	}
	errs = append(errs, os.RemoveAll(w.dir))
	return errors.Join(errs...)
}

// PIDs are the processes the topology runs (primary, replicas, Sentinels), for the tests.
func (t *topology) pids() []int {
	var out []int
	for _, m := range append([]*redisq.ManagedRedis{t.primary}, t.replicas...) {
		if m != nil && m.PID() != 0 {
			out = append(out, m.PID())
		}
	}
	for _, w := range t.watchers {
		out = append(out, w.proc.PID())
	}
	return out
}

// stop stops every process by its PID and removes every directory qbench made.
func (t *topology) stop() error {
	var errs []error
	for _, w := range t.watchers {
		errs = append(errs, w.stop())
	}
	t.proxy.close()
	for _, r := range t.replicas {
		errs = append(errs, r.Stop())
	}
	if t.primary != nil {
		errs = append(errs, t.primary.Stop())
	}
	return errors.Join(errs...)
}

// masterAddr is where the Sentinels say the primary is, asking each in turn until one answers.
func (t *topology) masterAddr(ctx context.Context) (string, error) {
	var errs []error
	for _, w := range t.watchers {
		a, err := w.client.GetMasterAddrByName(ctx, masterName).Result()
		if err == nil && len(a) == 2 {
			return net.JoinHostPort(a[0], a[1]), nil
		}
		errs = append(errs, fmt.Errorf("sentinel %s: %v", w.addr(), err))
	}
	return "", errors.Join(errs...)
}

// realAddr maps the proxy's address, by which the Sentinels know the primary qbench started,
// to that server's own: clients bypass the proxy, so a partition never cuts them off.
func (t *topology) realAddr(addr string) string {
	if addr == t.proxy.addr() {
		return t.primary.Addr()
	}
	return addr
}

// waitReplicasOnline waits until the primary at addr lists n replicas online with a recent
// acknowledgement: before that, min-replicas-to-write refuses the set-up's first writes.
func waitReplicasOnline(ctx context.Context, addr string, n int) error {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	var last string
	deadline := time.Now().Add(readyLimit)
	for time.Now().Before(deadline) {
		info, err := c.Info(ctx, "replication").Result()
		if err == nil && onlineReplicas(info) >= n {
			return nil
		}
		last = fmt.Sprint(err, info)
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("the primary's %d replicas not all online within %s: %s", n, readyLimit, last)
}

// onlineReplicas counts the slaveN lines of INFO replication in state online with lag <= 1 s.
func onlineReplicas(info string) int {
	n := 0
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "slave") || !strings.Contains(line, "state=online") {
			continue
		}
		if lag, ok := field(line, "lag"); ok && (lag == "0" || lag == "1") {
			n++
		}
	}
	return n
}

// field reads name=value from a comma-separated INFO value.
func field(line, name string) (string, bool) {
	_, v, _ := strings.Cut(line, ":")
	for _, kv := range strings.Split(v, ",") {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			return val, true
		}
	}
	return "", false
}

// waitAgreed waits until every Sentinel sees the primary up, its n replicas, and the other
// Sentinels (which they learn from each other's hello messages, every 2 s): a Sentinel that
// knows no other cannot reach the quorum, nor be elected to fail over.
func (t *topology) waitAgreed(ctx context.Context, n int) error {
	deadline := time.Now().Add(readyLimit)
	var last error
	for time.Now().Before(deadline) {
		last = nil
		for _, w := range t.watchers {
			m, err := w.client.Master(ctx, masterName).Result()
			switch {
			case err != nil:
				last = err
			case m["flags"] != "master" || m["num-slaves"] != strconv.Itoa(n) || m["num-other-sentinels"] != strconv.Itoa(sentinels-1):
				last = fmt.Errorf("sentinel %s sees flags %s, %s replicas, %s other sentinels", w.addr(), m["flags"], m["num-slaves"], m["num-other-sentinels"])
			}
			if last != nil {
				break
			}
		}
		if last == nil {
			return nil
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("sentinels not agreed within %s: %v", readyLimit, last)
}

// failoverSettled reports whether every Sentinel names the same primary and none is failing
// over, with that primary's address.
func (t *topology) failoverSettled(ctx context.Context) (string, bool) {
	var addr string
	for i, w := range t.watchers {
		m, err := w.client.Master(ctx, masterName).Result()
		if err != nil || strings.Contains(m["flags"], "failover_in_progress") {
			return "", false
		}
		a := net.JoinHostPort(m["ip"], m["port"])
		if i > 0 && a != addr {
			return "", false
		}
		addr = a
	}
	return addr, true
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
