package server

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// obufDefault is Redis 7.0.15's client-output-buffer-limit, restored after each case that
// changes it (the compared redis-server is shared).
const obufDefault = `CONFIG SET client-output-buffer-limit "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"`

// TestDiffRedisConfigSet: CONFIG SET accepts only what it applies. client-output-buffer-limit
// takes every class (it used to drop normal and replica and report "normal 0 0 0"), checks
// them all before applying any, and CONFIG GET shows the result; Redis's immutable configs
// (appendfilename, appenddirname, databases, ...) are refused with its exact error (CONFIG SET
// appendfilename ../../evil used to return OK).
func TestDiffRedisConfigSet(t *testing.T) {
	runDiffCases(t, []diffCase{
		{"client-output-buffer-limit", `
			CONFIG SET client-output-buffer-limit "normal 16mb 8mb 10"
			CONFIG GET client-output-buffer-limit
			CONFIG SET client-output-buffer-limit "replica 1mb 1mb 0 pubsub 2mb 1mb 5"
			CONFIG GET client-output-buffer-limit
			CONFIG SET client-output-buffer-limit "SLAVE 1k 1kb 1 Normal 0 0 0"
			CONFIG GET client-output-buffer-limit
			CONFIG SET client-output-buffer-limit ""
			CONFIG GET client-output-buffer-limit
			CONFIG SET client-output-buffer-limit "normal 1mb"
			CONFIG SET client-output-buffer-limit "normal 1 1 1 master 1 1 1"
			CONFIG SET client-output-buffer-limit "normal 1 1 1 foo 1 1 1"
			CONFIG SET client-output-buffer-limit "normal x 1 1"
			CONFIG SET client-output-buffer-limit "normal 1 1 -1"
			CONFIG SET client-output-buffer-limit "pubsub 5 5 5 normal 1 1 x"
			CONFIG GET client-output-buffer-limit
			` + obufDefault + `
			CONFIG GET client-output-buffer-limit`},
		{"immutable", `
			CONFIG SET appendfilename ../../evil
			CONFIG SET appenddirname ../evil
			CONFIG SET databases 32
			CONFIG SET io-threads 4
			CONFIG SET daemonize yes
			CONFIG SET replicaof "127.0.0.1 1"
			CONFIG SET rdbchecksum no
			CONFIG SET maxmemory 0 appendfilename x
			CONFIG GET appendfilename
			CONFIG GET appenddirname
			CONFIG GET databases
			CONFIG GET io-threads
			CONFIG GET daemonize`},
	})
}

// TestDiffRedisNormalOutputLimit: a normal client whose replies pass the normal class's hard
// limit is closed without them, by redis-server and by this server alike; others carry on.
func TestDiffRedisNormalOutputLimit(t *testing.T) {
	s := startServer(t, Config{})
	for _, side := range []struct{ name, addr string }{{"redis", startOwnRealRedis(t)}, {"qbench", s.Addr()}} {
		t.Run(side.name, func(t *testing.T) {
			c := dialRaw(t, side.addr)
			do := func(args ...string) string {
				t.Helper()
				if err := c.send(splitArgs(args)); err != nil {
					t.Fatal(err)
				}
				b, err := c.readReply(5 * time.Second)
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				return string(b)
			}
			do("CONFIG", "SET", "client-output-buffer-limit", "normal 100kb 0 0")
			vals := []string{"RPUSH", "l"}
			for i := 0; i < 300; i++ {
				vals = append(vals, strings.Repeat("x", 1000))
			}
			do(vals...)
			if got := do("LRANGE", "l", "0", "9"); !strings.HasPrefix(got, "*10\r\n") {
				t.Fatalf("a small LRANGE: %.40q", got)
			}
			if err := c.send(splitArgs([]string{"LRANGE", "l", "0", "-1"})); err != nil {
				t.Fatal(err)
			}
			b, err := c.readReply(5 * time.Second)
			if !errors.Is(err, io.EOF) && (err == nil || !strings.Contains(err.Error(), "reset")) {
				t.Fatalf("LRANGE of 300 KB past a 100 KB hard limit: reply %.40q, %v; want the connection closed", b, err)
			}
			c2 := dialRaw(t, side.addr)
			c2.send(splitArgs([]string{"CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0"}))
			if b, err := c2.readReply(5 * time.Second); err != nil || string(b) != "+OK\r\n" {
				t.Fatalf("another client: %q, %v", b, err)
			}
		})
	}
}

func splitArgs(a []string) [][]byte {
	out := make([][]byte, len(a))
	for i, s := range a {
		out[i] = []byte(s)
	}
	return out
}
