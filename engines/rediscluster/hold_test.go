package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"qbench/engines/redisq"
)

// fakeNode accepts one connection at a time and reports every byte it reads on got, then its
// connection's end on closed.
func fakeNode(t *testing.T) (port int, got chan []byte, closed chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got, closed = make(chan []byte, 16), make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						got <- append([]byte(nil), buf[:n]...)
					}
					if err != nil {
						closed <- struct{}{}
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, got, closed
}

// A held node's data links forward nothing until Release; Drop closes them and what they held
// never reaches the node. The bus links are not held.
func TestLinksHold(t *testing.T) {
	data, got, closed := fakeNode(t)
	bus, busGot, _ := fakeNode(t)
	l, err := newLinks(1)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.start(0, data, bus, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	dial := func(port int) net.Conn {
		c, err := net.Dial("tcp4", "127.0.0.1:"+itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	recv := func(ch chan []byte, want string) {
		t.Helper()
		select {
		case b := <-ch:
			if string(b) != want {
				t.Fatalf("node read %q, want %q", b, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("node never read %q", want)
		}
	}
	c := dial(l.proxies[0].announce)
	if _, err := c.Write([]byte("before")); err != nil {
		t.Fatal(err)
	}
	recv(got, "before")

	l.Hold(0)
	busConn := dial(l.proxies[0].busPort)
	if _, err := busConn.Write([]byte("gossip")); err != nil {
		t.Fatal(err)
	}
	recv(busGot, "gossip") // the bus goes on
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	// Absence needs a bound: unheld, the proxy forwards in microseconds.
	select {
	case b := <-got:
		t.Fatalf("the node read %q while its links were held", b)
	case <-time.After(200 * time.Millisecond):
	}
	l.Release(0)
	recv(got, "held")

	l.Hold(0)
	if _, err := c.Write([]byte("dropped")); err != nil {
		t.Fatal(err)
	}
	if n := l.Drop(0); n != 1 {
		t.Errorf("Drop closed %d data links, want 1", n)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the node's end of the dropped link stayed open")
	}
	select {
	case b := <-got:
		t.Fatalf("the node read %q after Drop", b)
	default:
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !strings.Contains(fmt.Sprint(err), "reset") {
		t.Errorf("the replica's end of the dropped link: %v, want it closed", err)
	}
}

// A primary-kill with the replicas held behind: a write the primary acknowledges during the hold
// (WAIT 1 answers 0) is gone once the replica is promoted; one replicated before it survives.
func TestFailoverReplicasBehind(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := StartCluster(ctx, DefaultPrimaries, 1, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	key := redisq.ShardKey("behind", 0, 3) + ":k"
	slot := redisq.Slot(key)
	e := &engine{cluster: c, shards: []shard{{slot: slot, key: key}}}
	old, err := c.PrimaryFor(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nodeDo(ctx, old.Addr(), "SET", key+":before", "1"); err != nil {
		t.Fatal(err)
	}
	if n, err := nodeInt(ctx, old.Addr(), "WAIT", 1, 2000); err != nil || n != 1 {
		t.Fatalf("WAIT 1 before the hold: %d, %v", n, err)
	}
	e.HoldReplicas(2 * time.Second)
	done := make(chan error, 1)
	go func() { done <- e.Failover(ctx) }()
	// Writes until one is acknowledged and not replicated: the hold has begun.
	var alone string
	for i := 0; alone == "" && i < 1000; i++ {
		k := key + ":" + itoa(i)
		if _, err := nodeDo(ctx, old.Addr(), "SET", k, "x"); err != nil {
			t.Fatalf("write %d to the primary before its kill: %v", i, err)
		}
		if n, err := nodeInt(ctx, old.Addr(), "WAIT", 1, 20); err == nil && n == 0 {
			alone = k
		}
	}
	if alone == "" {
		t.Fatal("every write was replicated: the replicas were not held")
	}
	// A WAIT that times out says an acknowledgement was held, not that the write was: the one
	// that first timed out may have reached a replica as the hold began. A write made after it,
	// once the hold is in place both ways, is on no replica.
	alone = key + ":held"
	if _, err := nodeDo(ctx, old.Addr(), "SET", alone, "x"); err != nil {
		t.Fatalf("write to the held primary: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	now, err := c.PrimaryFor(ctx, slot)
	if err != nil || now == old {
		t.Fatalf("slot %d after the kill: %v, %v (old primary %s)", slot, now, err, old.Addr())
	}
	if v, err := nodeDo(ctx, now.Addr(), "GET", key+":before"); err != nil || v != "1" {
		t.Errorf("the write replicated before the hold: %q, %v", v, err)
	}
	if n, err := nodeInt(ctx, now.Addr(), "EXISTS", alone); err != nil || n != 0 {
		t.Errorf("%s, acknowledged during the hold, survived the failover: EXISTS %d, %v", alone, n, err)
	}
}
