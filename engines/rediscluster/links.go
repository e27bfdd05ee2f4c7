package rediscluster

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"qbench/engines/splice"
)

// Links carries all node-to-node traffic of the managed cluster, so that a partition can cut one
// node off from the others while clients still reach it. This machine has no packet filter
// (no iptables, no nft), and network namespaces would take the nodes off 127.0.0.1; rules in the
// kernel would also outlive a qbench that dies before removing them. So the cut is done in user
// space, in qbench's own process: each node announces (cluster-announce-port and
// cluster-announce-bus-port) two proxy ports that Links owns instead of its own, so the other
// nodes' cluster-bus links and its replicas' replication links to it go through the proxies.
// Clients dial the node's own port (Cluster.DialAddr maps an announced address back), so they
// bypass them. When qbench exits, however it exits, the proxies go with it and the nodes stop:
// nothing is left behind.
//
// Cutting node i closes every proxied connection to i and every one from i (found by the
// connecting socket's owner, the node's PID, through /proc), and refuses new ones until Heal.
type Links struct {
	mu      sync.Mutex
	proxies []*nodeProxy
	cut     map[int]bool
	conns   map[*link]struct{}
	// held are the nodes whose incoming data links (their replicas' replication links) forward
	// nothing, either way, until the channel is closed (Hold).
	held map[int]chan struct{}
	// pids are the nodes' PIDs as last set (setPID): the cluster tells Links when a node starts
	// again, so the proxies never read the node's process state concurrently with a fault.
	pids   []int
	closed bool
}

// nodeProxy is one node's pair of announced ports: data (clients' protocol, used by replicas)
// and bus.
type nodeProxy struct {
	data, bus         net.Listener
	dataTo, busTo     string // the node's own addresses, set once it runs
	announce, busPort int
}

// link is one proxied connection: from node src (-1 when unknown) to node dst, on dst's data
// port (a replication link, when src is dst's replica) or its bus port.
type link struct {
	src, dst int
	data     bool
	// Pair's Close closes both ends, which makes the node see the link fail as it would on a
	// real network's reset, and wakes a forwarder waiting out a hold.
	*splice.Pair
}

// newLinks opens the proxy listeners of n nodes on 127.0.0.1.
func newLinks(n int) (*Links, error) {
	l := &Links{cut: map[int]bool{}, conns: map[*link]struct{}{}, held: map[int]chan struct{}{}, pids: make([]int, n)}
	for range n {
		data, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			l.Close()
			return nil, err
		}
		bus, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			data.Close()
			l.Close()
			return nil, err
		}
		l.proxies = append(l.proxies, &nodeProxy{data: data, bus: bus,
			announce: data.Addr().(*net.TCPAddr).Port, busPort: bus.Addr().(*net.TCPAddr).Port})
	}
	return l, nil
}

// setPID records node i's process, whose sockets are node i's connections.
func (l *Links) setPID(i, pid int) {
	l.mu.Lock()
	l.pids[i] = pid
	l.mu.Unlock()
}

// start points node i's proxies at its own port and bus port and starts accepting. A target
// that is one of the proxies' own ports would make a proxy dial itself without end; the node
// could not have bound it anyway, so it is refused.
func (l *Links) start(i int, port, busPort, pid int) error {
	p := l.proxies[i]
	dataTo, busTo := "127.0.0.1:"+strconv.Itoa(port), "127.0.0.1:"+strconv.Itoa(busPort)
	for _, q := range l.proxies {
		if q.announce == port || q.busPort == port || q.announce == busPort || q.busPort == busPort {
			return fmt.Errorf("node %d's ports %d/%d include a proxy's own", i, port, busPort)
		}
	}
	l.mu.Lock()
	l.pids[i] = pid
	p.dataTo, p.busTo = dataTo, busTo
	l.mu.Unlock()
	go l.accept(i, p.data, dataTo, true)
	go l.accept(i, p.bus, busTo, false)
	return nil
}

// announced are the settings that make node i advertise its proxies.
func (l *Links) announced(i int) map[string]string {
	p := l.proxies[i]
	return map[string]string{
		"cluster-announce-ip":       "127.0.0.1",
		"cluster-announce-port":     strconv.Itoa(p.announce),
		"cluster-announce-bus-port": strconv.Itoa(p.busPort),
	}
}

// realAddr maps node i's announced address to its own; any other address is returned unchanged.
func (l *Links) realAddr(addr string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.proxies {
		if addr == "127.0.0.1:"+strconv.Itoa(p.announce) && p.dataTo != "" {
			return p.dataTo
		}
	}
	return addr
}

func (l *Links) accept(dst int, ln net.Listener, to string, data bool) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed
		}
		go l.serve(dst, c, to, data)
	}
}

func (l *Links) serve(dst int, a net.Conn, to string, data bool) {
	// A connection to a cut node is refused before its owner is looked up: that lookup scans
	// /proc, and during a partition under load the nodes' reconnects to the cut node could
	// otherwise pile up faster than the scans finish (10,191 goroutines in owner, seen once).
	l.mu.Lock()
	refused := l.closed || l.cut[dst]
	l.mu.Unlock()
	if refused {
		a.Close()
		return
	}
	src := l.owner(a.RemoteAddr().(*net.TCPAddr).Port, a.LocalAddr().(*net.TCPAddr).Port)
	l.mu.Lock()
	blocked := l.closed || l.cut[dst] || (src >= 0 && l.cut[src])
	l.mu.Unlock()
	if blocked {
		a.Close()
		return
	}
	b, err := net.Dial("tcp4", to)
	if err != nil {
		a.Close()
		return
	}
	k := &link{src: src, dst: dst, data: data, Pair: splice.NewPair(a, b)}
	l.mu.Lock()
	if l.closed || l.cut[dst] || (src >= 0 && l.cut[src]) { // cut while dialling
		l.mu.Unlock()
		a.Close()
		b.Close()
		return
	}
	l.conns[k] = struct{}{}
	l.mu.Unlock()
	k.Run(func(gone <-chan struct{}) bool { return l.wait(k, gone) }, false)
	l.mu.Lock()
	delete(l.conns, k)
	l.mu.Unlock()
}

// wait holds a chunk read on a data link to a held node until the hold ends; meanwhile nothing
// more is read, so the bytes behind it wait in the kernel's buffers, as on a stalled network
// path. When the link is closed while held (Drop), they are gone.
func (l *Links) wait(k *link, gone <-chan struct{}) bool {
	if !k.data {
		return true
	}
	l.mu.Lock()
	g := l.held[k.dst]
	l.mu.Unlock()
	if g == nil {
		return true
	}
	select {
	case <-g:
		return true
	case <-gone:
		return false
	}
}

// owner is the index of the node holding the connecting side of a proxied connection (the
// socket from 127.0.0.1:port to 127.0.0.1:to), or -1: the socket's inode from /proc/net/tcp,
// then the node process holding it. Done once per connection; the cluster's links are
// long-lived.
func (l *Links) owner(port, to int) int {
	inode, err := socketInode(port, to)
	if err != nil {
		return -1
	}
	want := "socket:[" + inode + "]"
	l.mu.Lock()
	pids := append([]int(nil), l.pids...)
	l.mu.Unlock()
	for i, pid := range pids {
		if pid == 0 {
			continue
		}
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if t, err := os.Readlink(dir + "/" + fd.Name()); err == nil && t == want {
				return i
			}
		}
	}
	return -1
}

// socketInode finds the inode of the IPv4 TCP socket from 127.0.0.1:port to 127.0.0.1:to. An
// older socket on the same pair in TIME_WAIT has no inode (0) and is passed over.
func socketInode(port, to int) (string, error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return "", err
	}
	defer f.Close()
	local, remote := fmt.Sprintf("0100007F:%04X", port), fmt.Sprintf("0100007F:%04X", to)
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(fields) >= 10 && fields[1] == local && fields[2] == remote && fields[9] != "0" {
			return fields[9], nil
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", errors.New("socket not found")
}

// Cut isolates node i from the other nodes: its proxied connections, both ways, are closed and
// new ones refused until Heal. It returns how many connections it closed.
func (l *Links) Cut(i int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut[i] = true
	n := 0
	for k := range l.conns {
		if k.dst == i || k.src == i {
			k.Close()
			n++
		}
	}
	return n
}

// Heal lets node i's connections through again; the nodes reconnect on their own.
func (l *Links) Heal(i int) {
	l.mu.Lock()
	delete(l.cut, i)
	l.mu.Unlock()
}

// Hold stops node i's incoming data links (its replicas' replication links, both ways: the
// stream to them and their acknowledgements) from forwarding anything until Release or Drop.
// Links opened while held wait too.
func (l *Links) Hold(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[i] == nil {
		l.held[i] = make(chan struct{})
	}
}

// Release ends node i's hold: what waited is forwarded.
func (l *Links) Release(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g := l.held[i]; g != nil {
		close(g)
		delete(l.held, i)
	}
}

// Drop ends node i's hold by closing its held data links: what they had not forwarded is gone,
// as bytes in flight are when the node dies. It returns how many links it closed.
func (l *Links) Drop(i int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for k := range l.conns {
		if k.data && k.dst == i {
			k.Close()
			n++
		}
	}
	if g := l.held[i]; g != nil {
		close(g)
		delete(l.held, i)
	}
	return n
}

// Close stops every proxy and closes every proxied connection.
func (l *Links) Close() error {
	l.mu.Lock()
	l.closed = true
	for k := range l.conns {
		k.Close()
	}
	for i, g := range l.held {
		close(g)
		delete(l.held, i)
	}
	l.mu.Unlock()
	for _, p := range l.proxies {
		p.data.Close()
		p.bus.Close()
	}
	return nil
}
