package server

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestStreamQueueConcurrent runs the stream queue design the benchmark uses: producers XADD,
// consumers in one group XREADGROUP BLOCK and XACK. Every message must be delivered exactly
// once and the group must end with no lag and nothing pending.
func TestStreamQueueConcurrent(t *testing.T) {
	const producers, consumers, perProducer = 4, 4, 500
	s := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := newClient(t, s, 3)
	if err := admin.XGroupCreateMkStream(ctx, "q", "g", "$").Err(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	total := producers * perProducer
	done := make(chan struct{})
	var wg sync.WaitGroup
	for c := 0; c < consumers; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2 + c%2})
			defer rdb.Close()
			for {
				select {
				case <-done:
					return
				default:
				}
				res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
					Group: "g", Consumer: "c" + strconv.Itoa(c), Streams: []string{"q", ">"}, Count: 10, Block: 50 * time.Millisecond,
				}).Result()
				if err == redis.Nil {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				var ids []string
				mu.Lock()
				for _, m := range res[0].Messages {
					seen[m.Values["m"].(string)]++
					ids = append(ids, m.ID)
				}
				n := len(seen)
				mu.Unlock()
				if err := rdb.XAck(ctx, "q", "g", ids...).Err(); err != nil {
					t.Error(err)
					return
				}
				if n == total {
					select {
					case <-done:
					default:
						close(done)
					}
				}
			}
		}(c)
	}
	var pwg sync.WaitGroup
	for p := 0; p < producers; p++ {
		pwg.Add(1)
		go func(p int) {
			defer pwg.Done()
			rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
			defer rdb.Close()
			for i := 0; i < perProducer; i += 10 {
				pipe := rdb.Pipeline()
				for j := i; j < i+10; j++ {
					pipe.XAdd(ctx, &redis.XAddArgs{Stream: "q", Values: []any{"m", fmt.Sprintf("%d-%d", p, j)}})
				}
				if _, err := pipe.Exec(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}(p)
	}
	pwg.Wait()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("not all messages delivered")
	}
	wg.Wait()
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("message %s delivered %d times", k, n)
		}
	}
	groups, err := admin.XInfoGroups(ctx, "q").Result()
	if err != nil {
		t.Fatal(err)
	}
	if g := groups[0]; g.Pending != 0 || g.Lag != 0 || g.EntriesRead != int64(total) {
		t.Fatalf("group after drain: %+v", g)
	}
}

// TestListQueueConcurrent: producers LPUSH, consumers BRPOP; exactly-once delivery.
func TestListQueueConcurrent(t *testing.T) {
	const producers, consumers, perProducer = 4, 6, 500
	s := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	total := producers * perProducer
	got := make(chan string, total)
	for c := 0; c < consumers; c++ {
		go func() {
			rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
			defer rdb.Close()
			for {
				v, err := rdb.BRPop(ctx, 100*time.Millisecond, "l").Result()
				if err == redis.Nil {
					continue
				}
				if err != nil {
					return
				}
				got <- v[1]
			}
		}()
	}
	for p := 0; p < producers; p++ {
		go func(p int) {
			rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
			defer rdb.Close()
			for i := 0; i < perProducer; i++ {
				if err := rdb.LPush(ctx, "l", fmt.Sprintf("%d-%d", p, i)).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}(p)
	}
	seen := map[string]bool{}
	for len(seen) < total {
		select {
		case v := <-got:
			if seen[v] {
				t.Fatalf("%s delivered twice", v)
			}
			seen[v] = true
		case <-ctx.Done():
			t.Fatalf("only %d of %d delivered", len(seen), total)
		}
	}
}

// TestBlockedClientDisconnect: a client that disconnects while blocked is forgotten, and the
// next push goes to a live client.
func TestBlockedClientDisconnect(t *testing.T) {
	s := startServer(t, Config{})
	ctx := context.Background()
	gone := dialRaw(t, s.Addr())
	gone.send([][]byte{[]byte("BLPOP"), []byte("k"), []byte("0")})
	waitBlocked(t, s, 1)
	gone.c.Close()
	waitFor(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.blocked.count() == 0
	})
	rdb := newClient(t, s, 2)
	res := make(chan []string, 1)
	go func() {
		v, _ := newClient(t, s, 2).BLPop(ctx, 5*time.Second, "k").Result()
		res <- v
	}()
	waitBlocked(t, s, 1)
	rdb.RPush(ctx, "k", "v")
	if v := <-res; len(v) != 2 || v[1] != "v" {
		t.Fatalf("live client got %v", v)
	}
	if n, _ := rdb.LLen(ctx, "k").Result(); n != 0 {
		t.Fatalf("element left behind: LLEN %d", n)
	}
}

// TestBlockTimeoutPrecision: BLOCK 30 returns after about 30ms, not seconds; BLOCK 0 waits.
func TestBlockTimeoutPrecision(t *testing.T) {
	s := startServer(t, Config{})
	c := dialRaw(t, s.Addr())
	start := time.Now()
	c.send([][]byte{[]byte("XREAD"), []byte("BLOCK"), []byte("30"), []byte("STREAMS"), []byte("s"), []byte("$")})
	b, err := c.readReply(5 * time.Second)
	if err != nil || string(b) != "*-1\r\n" {
		t.Fatalf("reply %q, %v", b, err)
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > 500*time.Millisecond {
		t.Fatalf("BLOCK 30 took %v", d)
	}
	c.send([][]byte{[]byte("BLPOP"), []byte("l"), []byte("0")})
	if _, err := c.readReply(100 * time.Millisecond); err == nil {
		t.Fatal("BLPOP 0 returned without data")
	}
}

// TestStreamIDsWhenClockGoesBack: auto IDs keep increasing when the clock moves backwards.
func TestStreamIDsWhenClockGoesBack(t *testing.T) {
	s := startServer(t, Config{})
	now := time.UnixMilli(5000)
	s.mu.Lock()
	s.store.Now = func() time.Time { return now }
	s.mu.Unlock()
	rdb := newClient(t, s, 2)
	ctx := context.Background()
	var ids []string
	for _, ms := range []int64{5000, 5000, 4000, 6000} {
		s.mu.Lock()
		now = time.UnixMilli(ms)
		s.mu.Unlock()
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"a", 1}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	want := []string{"5000-0", "5000-1", "5000-2", "6000-0"}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
}

// TestGoRedisPipelineTxPubSub covers go-redis pipelines, MULTI/EXEC transactions and pub/sub.
func TestGoRedisPipelineTxPubSub(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			s := startServer(t, Config{})
			rdb := newClient(t, s, proto)
			ctx := context.Background()
			cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.RPush(ctx, "l", "a", "b")
				p.LRange(ctx, "l", 0, -1)
				p.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []any{"f", "v"}})
				return nil
			})
			if err != nil || len(cmds) != 3 {
				t.Fatalf("TxPipelined: %v %v", cmds, err)
			}
			if v := cmds[1].(*redis.StringSliceCmd).Val(); fmt.Sprint(v) != "[a b]" {
				t.Fatalf("LRANGE in tx = %v", v)
			}
			sub := rdb.Subscribe(ctx, "news")
			defer sub.Close()
			if _, err := sub.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			psub := rdb.PSubscribe(ctx, "ne*")
			defer psub.Close()
			if _, err := psub.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := rdb.Publish(ctx, "news", "hello").Result(); err != nil || n != 2 {
				t.Fatalf("PUBLISH = %d, %v", n, err)
			}
			m, err := sub.ReceiveMessage(ctx)
			if err != nil || m.Channel != "news" || m.Payload != "hello" {
				t.Fatalf("message %+v, %v", m, err)
			}
			pm, err := psub.ReceiveMessage(ctx)
			if err != nil || pm.Pattern != "ne*" || pm.Payload != "hello" {
				t.Fatalf("pmessage %+v, %v", pm, err)
			}
		})
	}
}
