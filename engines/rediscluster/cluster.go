package rediscluster

import (
	"context"
	"errors"
	"fmt"
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

// NodeTimeout is the managed cluster's cluster-node-timeout: how long a primary may be silent
// before the others mark it failed and its replica takes over. Redis's default (15 s) would make
// every failover scenario mostly waiting.
const NodeTimeout = 1000 * time.Millisecond

// Cluster is a Redis Cluster of redis-server processes on 127.0.0.1, each a redisq.ManagedRedis
// (through engines/procs: own process group, parent-death signal, stopped by PID) in a temporary
// directory of its own, where its nodes.conf lets a restarted node rejoin as who it was.
type Cluster struct {
	Nodes []*redisq.ManagedRedis
	// Primaries is how many primaries the cluster was created with.
	Primaries int
	// Links carries the node-to-node traffic (links.go) when the cluster was started with it, for
	// the partition fault: nodes announce its proxy ports. Nil otherwise: the proxies live in
	// qbench's process, and a busy generator delaying the cluster bus past cluster-node-timeout
	// would fail nodes over with no fault at all.
	Links *Links
}

// StartCluster starts primaries*(1+replicas) nodes with the scenario's persistence settings,
// joins them with redis-cli --cluster create (which deals the 16,384 slots in equal contiguous
// ranges over the primaries and a replica or more to each), and waits until every node reports
// cluster_state:ok and every replica's link to its primary is up, then, with
// min-replicas-to-write set, until every primary counts its replicas online (WaitReplicasReady).
// withLinks routes the nodes'
// own traffic through Links, so that a partition can cut it.
func StartCluster(ctx context.Context, primaries, replicas int, persistence map[string]string, withLinks bool) (*Cluster, error) {
	cli, err := redisCLI()
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{}
	for k, v := range persistence {
		cfg[k] = v
	}
	cfg["cluster-enabled"] = "yes"
	cfg["cluster-config-file"] = "nodes.conf"
	cfg["cluster-node-timeout"] = strconv.FormatInt(NodeTimeout.Milliseconds(), 10)
	c := &Cluster{Primaries: primaries}
	total := primaries * (1 + replicas)
	var links *Links
	if withLinks {
		var err error
		if links, err = newLinks(total); err != nil {
			return nil, fmt.Errorf("cluster links: %w", err)
		}
		c.Links = links
	}
	for i := range total {
		nodeCfg := map[string]string{}
		for k, v := range cfg {
			nodeCfg[k] = v
		}
		if links != nil {
			for k, v := range links.announced(i) {
				nodeCfg[k] = v
			}
		}
		// The bus port is chosen, not Redis's port+10000, which may be a port already in use
		// (one of the proxies' own, say).
		bus, err := procs.FreePorts(1)
		if err != nil {
			c.Stop()
			return nil, err
		}
		nodeCfg["cluster-port"] = strconv.Itoa(bus[0])
		n, err := redisq.StartRedis(ctx, "", nodeCfg)
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("cluster node: %w", err)
		}
		c.Nodes = append(c.Nodes, n)
		if links == nil {
			continue
		}
		if err := links.start(i, n.Port, bus[0], n.PID()); err != nil {
			c.Stop()
			return nil, err
		}
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if err := runCLI(ctx, cli, args); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.WaitHealthy(ctx, 30*time.Second, true); err != nil {
		c.Stop()
		return nil, err
	}
	// The replicas' side reads up before every primary counts them as good (readiness.go): with
	// min-replicas-to-write set, wait for the primaries' own view, so that the run's first write
	// is not refused. Only then: nothing else needs it, and clusters whose bus ran through the
	// link proxies lost it (every node failing every other) in about 1 of 5 starts under -race
	// when every start waited, against none of 8 without (not understood yet).
	if n, _ := strconv.Atoi(persistence["min-replicas-to-write"]); n > 0 {
		if err := c.WaitReplicasReady(ctx, replicas, 30*time.Second); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// redisCLI finds redis-cli beside the redis-server in use, or on PATH.
func redisCLI() (string, error) {
	if srv, err := redisq.RedisServerPath(); err == nil {
		if p := filepath.Join(filepath.Dir(srv), "redis-cli"); fileExists(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("redis-cli")
	if err != nil {
		return "", fmt.Errorf("redis-cli not found (Debian's redis-tools): %w", err)
	}
	return p, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// runCLI runs redis-cli to completion, bounded by ctx, through procs like every child.
func runCLI(ctx context.Context, cli string, args []string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	p, err := procs.Run(ctx, procs.Command{Path: cli, Args: args})
	switch {
	case p == nil:
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return errors.New("redis-cli --cluster create did not finish within 30 s")
	case err != nil && ctx.Err() != nil:
		return err
	case err != nil:
		return fmt.Errorf("redis-cli %s: %v: %s", strings.Join(args[:2], " "), err, p.LogTail(1000))
	}
	return nil
}

// Addrs are the nodes' addresses, the seed list for a ClusterClient.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		a[i] = n.Addr()
	}
	return a
}

// Node is the managed node at addr (its own or its announced address), nil if none.
func (c *Cluster) Node(addr string) *redisq.ManagedRedis {
	addr = c.DialAddr(addr)
	for _, n := range c.Nodes {
		if n.Addr() == addr {
			return n
		}
	}
	return nil
}

// index is the position of node n in Nodes (and in Links), -1 if none.
func (c *Cluster) index(n *redisq.ManagedRedis) int {
	for i, m := range c.Nodes {
		if m == n {
			return i
		}
	}
	return -1
}

// DialAddr is where a client reaches the node announcing addr: its own port, not the proxy the
// other nodes use, so that a partition between nodes leaves clients connected.
func (c *Cluster) DialAddr(addr string) string {
	if c.Links == nil {
		return addr
	}
	return c.Links.realAddr(addr)
}

// Stop stops every node by PID and removes its directory, and closes the links' proxies.
func (c *Cluster) Stop() error {
	var err error
	for _, n := range c.Nodes {
		err = errors.Join(err, n.Stop())
	}
	if c.Links != nil {
		err = errors.Join(err, c.Links.Close())
	}
	return err
}

// running are the nodes whose process is up.
func (c *Cluster) running() []*redisq.ManagedRedis {
	var up []*redisq.ManagedRedis
	for _, n := range c.Nodes {
		if n.PID() != 0 {
			up = append(up, n)
		}
	}
	return up
}

// WaitHealthy waits until every running node reports cluster_state:ok (every slot served by a
// primary it does not consider failed) and, with links, every running replica's link to its
// primary is up, within limit.
func (c *Cluster) WaitHealthy(ctx context.Context, limit time.Duration, links bool) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var last error
	for {
		if last = c.healthy(ctx, links); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redis cluster not healthy within %s: %v", limit, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) healthy(ctx context.Context, links bool) error {
	return healthy(ctx, addrsOf(c.running()), links)
}

// addrsOf are the managed nodes' addresses.
func addrsOf(nodes []*redisq.ManagedRedis) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Addr()
	}
	return out
}

// healthy checks that every node at addrs reports cluster_state:ok and, with links, that every
// replica among them has its link to its primary up.
func healthy(ctx context.Context, addrs []string, links bool) error {
	for _, addr := range addrs {
		info, err := nodeDo(ctx, addr, "CLUSTER", "INFO")
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster_state not ok", addr)
		}
		if !links {
			continue
		}
		repl, err := nodeDo(ctx, addr, "INFO", "replication")
		if err != nil {
			return err
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return fmt.Errorf("%s: replica link to its primary not up", addr)
		}
	}
	return nil
}

// nodeDo sends one command to one node on a connection of its own and returns the reply as text.
func nodeDo(ctx context.Context, addr string, args ...any) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 300 * time.Millisecond,
		ReadTimeout: 2 * time.Second, ContextTimeoutEnabled: true, Protocol: 2})
	defer c.Close()
	v, err := c.Do(ctx, args...).Text()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %w", addr, args, err)
	}
	return v, nil
}

// nodeLine is one line of CLUSTER NODES.
type nodeLine struct {
	id, addr string
	// master is the ID of a replica's primary ("-" for a primary).
	master  string
	primary bool
	failed  bool
	// noAddr: the node's address is unknown (flag noaddr); handshake: not yet a member.
	noAddr, handshake bool
	slots             [][2]int
}

// serves reports whether the node serves slot.
func (n nodeLine) serves(slot int) bool {
	for _, r := range n.slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// clusterNodes reads CLUSTER NODES from addr: each node's address (without the bus port), role,
// whether addr considers it failed, and the slot ranges it serves.
func clusterNodes(ctx context.Context, addr string) ([]nodeLine, error) {
	s, err := nodeDo(ctx, addr, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	return parseClusterNodes(s), nil
}

// parseClusterNodes reads CLUSTER NODES's reply.
func parseClusterNodes(s string) []nodeLine {
	var out []nodeLine
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		n := nodeLine{id: f[0], addr: f[1], master: f[3]}
		if i := strings.IndexAny(n.addr, "@,"); i >= 0 {
			n.addr = n.addr[:i]
		}
		flags := "," + f[2] + ","
		n.primary = strings.Contains(flags, ",master,")
		n.failed = strings.Contains(flags, ",fail,") || strings.Contains(flags, ",fail?,")
		n.noAddr = strings.Contains(flags, ",noaddr,")
		n.handshake = strings.Contains(flags, ",handshake,")
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") { // a slot being migrated
				continue
			}
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil {
				n.slots = append(n.slots, [2]int{a, b})
			}
		}
		out = append(out, n)
	}
	return out
}

// primaryFor is the address of the healthy primary serving slot as the node at view sees it.
func primaryFor(ctx context.Context, view string, slot int) (string, error) {
	nodes, err := clusterNodes(ctx, view)
	if err != nil {
		return "", err
	}
	for _, n := range nodes {
		if n.primary && !n.failed && n.serves(slot) {
			return n.addr, nil
		}
	}
	return "", fmt.Errorf("%s: no healthy primary serves slot %d", view, slot)
}

// PrimaryFor is the managed node that is primary for slot now, as a running node sees it.
func (c *Cluster) PrimaryFor(ctx context.Context, slot int) (*redisq.ManagedRedis, error) {
	var last error
	for _, n := range c.running() {
		addr, err := primaryFor(ctx, n.Addr(), slot)
		if err != nil {
			last = err
			continue
		}
		if m := c.Node(addr); m != nil {
			return m, nil
		}
		return nil, fmt.Errorf("primary %s for slot %d is not a managed node", addr, slot)
	}
	if last == nil {
		last = errors.New("no node is running")
	}
	return nil, last
}

// WaitPromoted waits until every running node agrees that slot is served by a primary other than
// old and the cluster is healthy again: the failover is over.
func (c *Cluster) WaitPromoted(ctx context.Context, slot int, old string, limit time.Duration) error {
	return waitPromoted(ctx, func() []string { return addrsOf(c.running()) }, c.DialAddr, slot, old, limit)
}

// waitPromoted waits until every node at nodes() agrees that slot is served by a primary other
// than old and reports the cluster healthy: the failover is over. same maps the address a node
// announces to the one compared (the managed cluster's proxies); nodes is asked again each time
// (a managed node restarted meanwhile). An existing cluster's nodes are the ones CLUSTER NODES
// listed before the fault, without the old primary.
func waitPromoted(ctx context.Context, nodes func() []string, dial func(string) string, slot int, old string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var last error
	for {
		addrs := nodes()
		last = promoted(ctx, addrs, dial, slot, old)
		if last == nil {
			if last = healthy(ctx, addrs, false); last == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no replica promoted for slot %d within %s: %v", slot, limit, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func promoted(ctx context.Context, addrs []string, dial func(string) string, slot int, old string) error {
	for _, a := range addrs {
		addr, err := primaryFor(ctx, a, slot)
		if err != nil {
			return err
		}
		if dial(addr) == dial(old) {
			return fmt.Errorf("%s still sees %s as primary for slot %d", a, old, slot)
		}
	}
	return nil
}
