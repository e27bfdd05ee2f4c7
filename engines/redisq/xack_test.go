package redisq

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// A stream consumer acknowledges each batch XREADGROUP gave it with one XACK, so a run with
// count > 1 costs the server far fewer XACK calls than deliveries: counted by redis-server's own
// INFO commandstats, against the batches the test received. With count 1 there is one per
// message, which shows the count is what is measured.
func TestStreamAcksOneXACKPerBatch(t *testing.T) {
	needRedis(t)
	const messages = 2000
	cases := []struct {
		ack   string
		count int64
		// fewest deliveries per XACK the run must reach
		minPerAck float64
	}{
		{"after", 50, 10},
		{"before", 50, 10},
		{"after", 1, 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("ack=%s/count=%d", c.ack, c.count), func(t *testing.T) {
			ctx := context.Background()
			reg, err := engines.Lookup("redis")
			if err != nil {
				t.Fatal(err)
			}
			spec := engines.Spec{
				RunID: fmt.Sprintf("t%d", time.Now().UnixNano()), Design: "stream", Producers: 1, Consumers: 1,
				Options: Options{Stream: StreamOptions{Ack: c.ack, Count: c.count, Block: 100 * time.Millisecond, GroupStart: "0"}},
			}
			eng, p := setUpEngine(t, ctx, reg, spec)
			// The backlog is in place before the consumer starts, so batches fill.
			for seq := 0; seq < messages; seq += 100 {
				payloads := make([][]byte, 100)
				for i := range payloads {
					payloads[i] = binary.BigEndian.AppendUint64(nil, uint64(seq+i))
				}
				errs := make([]error, len(payloads))
				p.Send(ctx, payloads, errs)
				for _, err := range errs {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			admin := redis.NewClient(&redis.Options{Addr: eng.(engines.FactReporter).Facts(ctx).Address})
			defer admin.Close()
			if err := admin.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			cons, err := eng.NewConsumer(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer cons.Close()
			rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			var deliveries, batches int64
			for deliveries < messages {
				ds, err := cons.Receive(rctx)
				if err != nil {
					t.Fatalf("after %d deliveries: %v", deliveries, err)
				}
				if len(ds) == 0 {
					continue
				}
				if err := cons.Ack(ctx, ds); err != nil {
					t.Fatal(err)
				}
				deliveries += int64(len(ds))
				batches++
			}
			calls := xackCalls(t, admin)
			if calls != batches {
				t.Errorf("%d XACK calls for %d batches (%d deliveries): want one per batch", calls, batches, deliveries)
			}
			if float64(deliveries) < c.minPerAck*float64(calls) {
				t.Errorf("%d XACK calls for %d deliveries: want at most one per %.0f", calls, deliveries, c.minPerAck)
			}
			lag, err := eng.(engines.LagReporter).Lag(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if lag.Pending != 0 {
				t.Errorf("after acknowledging every batch %d entries are still pending", lag.Pending)
			}
		})
	}
}

// xackCalls reads cmdstat_xack's calls from INFO commandstats (0 when XACK never ran).
func xackCalls(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_xack:calls=")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(rest[:strings.IndexByte(rest+",", ',')], 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return n
	}
	return 0
}
