package server

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startServer starts a server on a free loopback port, closed when the test ends.
func startServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir() // SAVE, BGSAVE and BGREWRITEAOF write there
	}
	s := New(cfg)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newClient(t testing.TB, s *Server, proto int) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: proto, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestGoRedis drives milestone 1's commands through go-redis, over RESP3 (HELLO 3) and RESP2.
func TestGoRedis(t *testing.T) {
	for _, proto := range []int{3, 2} {
		t.Run(map[int]string{2: "resp2", 3: "resp3"}[proto], func(t *testing.T) {
			s := startServer(t, Config{EnableDebugCommand: "local"}) // DEBUG SLEEP below
			rdb := newClient(t, s, proto)
			ctx := context.Background()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			if v, err := rdb.Ping(ctx).Result(); err != nil || v != "PONG" {
				t.Fatalf("PING = %q, %v", v, err)
			}
			if v, err := rdb.Echo(ctx, "hi").Result(); err != nil || v != "hi" {
				t.Fatalf("ECHO = %q, %v", v, err)
			}
			info, err := rdb.Info(ctx, "server").Result()
			must(err)
			if !strings.Contains(info, "redis_version:7.0.15\r\n") {
				t.Fatalf("INFO server lacks redis_version: %q", info)
			}

			// Lists.
			if n, err := rdb.LPush(ctx, "l", "a", "b").Result(); err != nil || n != 2 {
				t.Fatalf("LPUSH = %d, %v", n, err)
			}
			must(rdb.RPush(ctx, "l", "c").Err())
			if n, _ := rdb.LLen(ctx, "l").Result(); n != 3 {
				t.Fatalf("LLEN = %d", n)
			}
			if v, err := rdb.BRPop(ctx, time.Second, "l").Result(); err != nil || v[0] != "l" || v[1] != "c" {
				t.Fatalf("BRPOP = %v, %v", v, err)
			}
			if _, err := rdb.BRPop(ctx, 50*time.Millisecond, "empty").Result(); err != redis.Nil {
				t.Fatalf("BRPOP timeout err = %v, want redis.Nil", err)
			}
			// A blocked BRPOP is woken by LPUSH from another client.
			got := make(chan []string, 1)
			go func() {
				v, _ := newClient(t, s, proto).BRPop(ctx, 5*time.Second, "q").Result()
				got <- v
			}()
			waitBlocked(t, s, 1)
			must(rdb.LPush(ctx, "q", "x").Err())
			if v := <-got; len(v) != 2 || v[1] != "x" {
				t.Fatalf("woken BRPOP = %v", v)
			}

			// Generic.
			if typ, _ := rdb.Type(ctx, "l").Result(); typ != "list" {
				t.Fatalf("TYPE = %q", typ)
			}
			if n, _ := rdb.Exists(ctx, "l", "nope").Result(); n != 1 {
				t.Fatalf("EXISTS = %d", n)
			}
			if n, _ := rdb.Del(ctx, "l").Result(); n != 1 {
				t.Fatalf("DEL = %d", n)
			}

			// Streams.
			for i := 0; i < 5; i++ {
				must(rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", MaxLen: 3, Values: []any{"f", i}}).Err())
			}
			if n, _ := rdb.XLen(ctx, "s").Result(); n != 3 {
				t.Fatalf("XLEN after MAXLEN 3 = %d", n)
			}
			must(rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", MaxLen: 2, Approx: true, Values: []any{"f", "x"}}).Err())
			msgs, err := rdb.XRange(ctx, "s", "-", "+").Result()
			must(err)
			if len(msgs) != 4 || msgs[3].Values["f"] != "x" {
				t.Fatalf("XRANGE = %v", msgs)
			}
			must(rdb.XGroupCreateMkStream(ctx, "jobs", "g", "$").Err())
			if err := rdb.XGroupCreateMkStream(ctx, "jobs", "g", "$").Err(); err == nil || err.Error() != "BUSYGROUP Consumer Group name already exists" {
				t.Fatalf("second XGROUP CREATE err = %v", err)
			}
			read := make(chan []redis.XStream, 1)
			go func() {
				v, err := newClient(t, s, proto).XReadGroup(ctx, &redis.XReadGroupArgs{
					Group: "g", Consumer: "c1", Streams: []string{"jobs", ">"}, Count: 10, Block: 5 * time.Second,
				}).Result()
				if err != nil {
					t.Error(err)
				}
				read <- v
			}()
			waitBlocked(t, s, 1)
			id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []any{"a", "1", "b", "2", "c", "3"}}).Result()
			must(err)
			v := <-read
			if len(v) != 1 || v[0].Stream != "jobs" || len(v[0].Messages) != 1 || v[0].Messages[0].ID != id || v[0].Messages[0].Values["c"] != "3" {
				t.Fatalf("XREADGROUP woken = %+v", v)
			}
			groups, err := rdb.XInfoGroups(ctx, "jobs").Result()
			must(err)
			if len(groups) != 1 || groups[0].Pending != 1 || groups[0].EntriesRead != 1 || groups[0].Lag != 0 || groups[0].LastDeliveredID != id {
				t.Fatalf("XINFO GROUPS = %+v", groups)
			}
			pend, err := rdb.XPending(ctx, "jobs", "g").Result()
			must(err)
			if pend.Count != 1 || pend.Lower != id || pend.Consumers["c1"] != 1 {
				t.Fatalf("XPENDING = %+v", pend)
			}
			hist, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"jobs", "0"}}).Result()
			must(err)
			if len(hist) != 1 || len(hist[0].Messages) != 1 || hist[0].Messages[0].ID != id {
				t.Fatalf("XREADGROUP 0 = %+v", hist)
			}
			if n, _ := rdb.XAck(ctx, "jobs", "g", id).Result(); n != 1 {
				t.Fatalf("XACK = %d", n)
			}
			if _, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"jobs", ">"}, Block: 20 * time.Millisecond}).Result(); err != redis.Nil {
				t.Fatalf("XREADGROUP timeout err = %v", err)
			}
			if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "nog", Consumer: "c", Streams: []string{"jobs", ">"}}).Err(); err == nil ||
				err.Error() != "NOGROUP No such key 'jobs' or consumer group 'nog' in XREADGROUP with GROUP option" {
				t.Fatalf("NOGROUP err = %v", err)
			}

			// SELECT via options, DEBUG SLEEP, FLUSHALL.
			db3 := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: proto, DB: 3})
			defer db3.Close()
			must(db3.Set(ctx, "k", "v", 0).Err())
			if n, _ := rdb.Exists(ctx, "k").Result(); n != 0 {
				t.Fatal("key set in db 3 visible in db 0")
			}
			start := time.Now()
			must(rdb.Do(ctx, "DEBUG", "SLEEP", "0.05").Err())
			if time.Since(start) < 50*time.Millisecond {
				t.Fatal("DEBUG SLEEP returned early")
			}
			must(rdb.FlushAll(ctx).Err())
			if n, _ := db3.Exists(ctx, "k").Result(); n != 0 {
				t.Fatal("FLUSHALL left a key")
			}
		})
	}
}

// waitBlocked waits until n clients are blocked.
func waitBlocked(t testing.TB, s *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		got := s.blocked.count()
		s.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("never saw %d blocked clients", n)
}

func TestStall(t *testing.T) {
	s := startServer(t, Config{})
	rdb := newClient(t, s, 3)
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.Stall(100 * time.Millisecond)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("PING answered %v into a 100ms stall", d)
	}
}

func TestCloseWithClients(t *testing.T) {
	s := New(Config{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	blocked := make(chan error, 1)
	go func() { blocked <- rdb.BLPop(ctx, 0, "never").Err() }()
	waitBlocked(t, s, 1)
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung with a blocked client")
	}
	if err := <-blocked; err == nil {
		t.Fatal("blocked BLPOP returned no error after Close")
	}
}

// TestActiveExpiry: keys with a TTL that nobody reads are removed by the server's cron.
func TestActiveExpiry(t *testing.T) {
	s := startServer(t, Config{})
	rdb := newClient(t, s, 2)
	ctx := context.Background()
	for i := 0; i < 500; i++ {
		rdb.Set(ctx, "dedupe:"+strconv.Itoa(i), "1", 20*time.Millisecond)
	}
	rdb.Set(ctx, "keep", "1", 0)
	waitFor(t, func() bool { n, _ := rdb.DBSize(ctx).Result(); return n == 1 })
	info, _ := rdb.Info(ctx, "stats").Result()
	if !strings.Contains(info, "expired_keys:500\r\n") {
		t.Fatalf("INFO stats: %s", info)
	}
}

// TestCloseDuringStall: Close returns promptly even while the server is stalled.
func TestCloseDuringStall(t *testing.T) {
	s := New(Config{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	s.Stall(time.Hour)
	pinged := make(chan error, 1)
	go func() { pinged <- rdb.Ping(ctx).Err() }()
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung during a stall")
	}
	// The PING either completed as the stall ended or failed with the connection; it must
	// not hang.
	select {
	case <-pinged:
	case <-time.After(5 * time.Second):
		t.Fatal("PING hung after Close")
	}
}

// TestClientListBlockedFlag: CLIENT LIST shows flags=b for a blocked client, as Redis does.
func TestClientListBlockedFlag(t *testing.T) {
	s := startServer(t, Config{})
	ctx := context.Background()
	blocked := dialRaw(t, s.Addr())
	blocked.send([][]byte{[]byte("BLPOP"), []byte("k"), []byte("0")})
	waitBlocked(t, s, 1)
	list, err := newClient(t, s, 2).ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, " flags=b ") || !strings.Contains(list, " cmd=blpop ") {
		t.Fatalf("CLIENT LIST:\n%s", list)
	}
}
