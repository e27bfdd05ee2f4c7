package redisq

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
	"qbench/engines/server"
)

// needRedis skips (fails under CI=true) when redis-server is not installed.
func needRedis(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is required under CI=true: %v", err)
		}
		t.Skipf("redis-server not installed: %v", err)
	}
}

// List consumers that pop in batches (redis.list.count) receive every message exactly once, never more
// than count at a time, and with count > 1 take several in one round trip once a backlog exists;
// on the in-repo server and on redis-server, for the list and the reliable list (with and
// without delivery counting). Live cases start the consumers on an empty list, so that blocked
// pops (and the reliable list's LMOVEs queued behind a blocked BLMOVE) are served by pushes.
func TestListConsumersBatchExactlyOnce(t *testing.T) {
	const messages = 3000
	cases := []struct {
		design        string
		count         int
		maxDeliveries int
		live          bool
	}{
		{"list", 1, 0, false},
		{"list", 7, 0, false},
		{"list", 100, 0, false},
		{"list", 100, 0, true},
		{"reliable-list", 1, 0, false},
		{"reliable-list", 7, 0, false},
		{"reliable-list", 100, 0, false},
		{"reliable-list", 100, 5, false},
		{"reliable-list", 100, 0, true},
		{"reliable-list", 100, 5, true},
	}
	for _, target := range []string{"embedded", "redis"} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s/count=%d/max=%d/live=%v", target, c.design, c.count, c.maxDeliveries, c.live), func(t *testing.T) {
				if target == "redis" {
					needRedis(t)
				}
				ctx := context.Background()
				reg, err := engines.Lookup(target)
				if err != nil {
					t.Fatal(err)
				}
				spec := engines.Spec{
					RunID: fmt.Sprintf("t%d", time.Now().UnixNano()), Design: c.design, Producers: 1, Consumers: 3,
					Options: Options{List: ListOptions{Count: c.count, MaxDeliveries: c.maxDeliveries}},
				}
				eng, p := setUpEngine(t, ctx, reg, spec)
				produce := func() {
					for seq := 0; seq < messages; seq += 50 {
						payloads := make([][]byte, 50)
						for i := range payloads {
							payloads[i] = binary.BigEndian.AppendUint64(make([]byte, 0, 64), uint64(seq+i))
							payloads[i] = append(payloads[i], "........................................................"...)
						}
						errs := make([]error, len(payloads))
						p.Send(ctx, payloads, errs)
						for _, err := range errs {
							if err != nil {
								t.Error(err)
							}
						}
						if c.live {
							time.Sleep(time.Millisecond)
						}
					}
				}
				if !c.live {
					// The backlog is in place before the consumers start, so batches must fill.
					produce()
				}
				var mu sync.Mutex
				seen := make([]int, messages)
				var received, biggest int
				rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				var wg sync.WaitGroup
				for id := 0; id < spec.Consumers; id++ {
					cons, err := eng.NewConsumer(ctx, id)
					if err != nil {
						t.Fatal(err)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer cons.Close()
						for rctx.Err() == nil {
							ds, err := cons.Receive(rctx)
							if err != nil {
								if rctx.Err() == nil {
									t.Error(err)
								}
								return
							}
							mu.Lock()
							biggest = max(biggest, len(ds))
							for _, d := range ds {
								seen[binary.BigEndian.Uint64(d.Payload)]++
							}
							received += len(ds)
							done := received >= messages
							mu.Unlock()
							if err := cons.Ack(ctx, ds); err != nil {
								t.Error(err)
								return
							}
							if done {
								cancel()
							}
						}
					}()
				}
				if c.live {
					time.Sleep(50 * time.Millisecond) // the consumers are blocked in their pops
					produce()
				}
				wg.Wait()
				for seq, n := range seen {
					if n != 1 {
						t.Fatalf("message %d delivered %d times", seq, n)
					}
				}
				if biggest > c.count {
					t.Fatalf("a Receive returned %d messages, more than count %d", biggest, c.count)
				}
				if c.count > 1 && !c.live && biggest < 2 {
					t.Fatalf("count %d but every Receive returned one message", c.count)
				}
				lag, err := eng.(engines.LagReporter).Lag(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if lag.Backlog != 0 || lag.Pending != 0 {
					t.Fatalf("after acknowledging everything: %+v", lag)
				}
			})
		}
	}
}

// The raw reply reader decodes what servers send for the replies the consumers read, in both
// protocols, and refuses what is cut short or is an error.
func TestRawReplies(t *testing.T) {
	cases := []struct {
		name    string
		read    func([]byte) ([]engines.Delivery, error)
		raw     string
		want    []string // payloads
		ids     []string // stream entry IDs, when checked
		wantErr bool
	}{
		{"blmpop", poppedOf, "*2\r\n$1\r\nk\r\n*2\r\n$3\r\nabc\r\n$0\r\n\r\n", []string{"abc", ""}, nil, false},
		{"blmpop-null-resp2", poppedOf, "*-1\r\n", nil, nil, false},
		{"blmpop-null-resp3", poppedOf, "_\r\n", nil, nil, false},
		{"blmpop-error", poppedOf, "-WRONGTYPE Operation against a key\r\n", nil, nil, true},
		{"blmpop-truncated", poppedOf, "*2\r\n$1\r\nk\r\n*2\r\n$3\r\nabc\r\n$5\r\nab", nil, nil, true},
		{"xread-resp3", entriesOf, "%1\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nd\r\n$2\r\nhi\r\n*2\r\n$3\r\n2-0\r\n*4\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nd\r\n$2\r\nyo\r\n",
			[]string{"hi", "yo"}, []string{"1-0", "2-0"}, false},
		{"xread-resp2", entriesOf, "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nd\r\n$2\r\nhi\r\n",
			[]string{"hi"}, []string{"1-0"}, false},
		{"xread-deleted-pending", entriesOf, "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*-1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nd\r\n$1\r\nz\r\n",
			[]string{"z"}, []string{"2-0"}, false},
		{"xread-timeout", entriesOf, "_\r\n", nil, nil, false},
		{"xread-nogroup", entriesOf, "-NOGROUP No such key\r\n", nil, nil, true},
		{"xread-blob-error", entriesOf, "!5\r\nERR x\r\n", nil, nil, true},
		{"xread-odd-fields", entriesOf, "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*1\r\n$1\r\nd\r\n", nil, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds, err := c.read([]byte(c.raw))
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want error %v", err, c.wantErr)
			}
			if len(ds) != len(c.want) {
				t.Fatalf("got %d deliveries, want %d", len(ds), len(c.want))
			}
			for i, d := range ds {
				if string(d.Payload) != c.want[i] {
					t.Fatalf("payload %d = %q, want %q", i, d.Payload, c.want[i])
				}
				if c.ids != nil && d.Handle.(*streamEntry).id != c.ids[i] {
					t.Fatalf("id %d = %v, want %s", i, d.Handle.(*streamEntry).id, c.ids[i])
				}
			}
		})
	}
}

// The stream consumer's reply reader agrees with go-redis's typed XReadGroup on a real reply, in
// RESP2 and RESP3, including an entry deleted while pending (replayed with ID 0).
func TestEntriesOfMatchesTypedReply(t *testing.T) {
	s := server.New(server.Config{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: proto})
			defer c.Close()
			key := fmt.Sprintf("s%d", proto)
			if err := c.XGroupCreateMkStream(ctx, key, "g", "0").Err(); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for i := 0; i < 5; i++ {
				id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"other", "x", streamField, fmt.Sprint("m", i)}}).Result()
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			if err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{key, ">"}, Count: 10, Block: -1}).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.XDel(ctx, key, ids[2]).Err(); err != nil {
				t.Fatal(err)
			}
			typed, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{key, "0"}, Count: 10, Block: -1}).Result()
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, m := range typed[0].Messages {
				if v, ok := m.Values[streamField].(string); ok {
					want = append(want, m.ID+"="+v)
				}
			}
			raw, err := c.DoRaw(ctx, "XREADGROUP", "GROUP", "g", "c", "COUNT", 10, "STREAMS", key, "0").Result()
			if err != nil {
				t.Fatal(err)
			}
			ds, err := entriesOf(raw)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range ds {
				got = append(got, d.Handle.(*streamEntry).id+"="+string(d.Payload))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 4 {
				t.Fatalf("raw reader %v, typed reply %v (want 4 entries)", got, want)
			}
		})
	}
}

// setUpEngine makes reg's engine for spec, sets it up (torn down and closed when the test ends)
// and returns it with producer 0.
func setUpEngine(t *testing.T, ctx context.Context, reg engines.Registration, spec engines.Spec) (engines.Engine, engines.Producer) {
	t.Helper()
	eng, err := reg.New(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Teardown(ctx)
		eng.Close()
	})
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := eng.NewProducer(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	return eng, p
}
