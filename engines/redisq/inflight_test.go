package redisq

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// Producer connections reuse their argument space (pushBuf) and consumers their deliveries
// (list, stream): with 8 batches of 16 in flight on one producer, every payload arrives intact
// and exactly once, and on a stream every entry is acknowledged (none left pending, which a
// handle overwritten before its XACK would leave). A buffer shared by two Sends in flight, or
// reused before its replies were read, delivers another batch's payloads twice.
func TestInFlightBuffersIntact(t *testing.T) {
	const senders, batches, batch = 8, 40, 16
	for _, target := range []string{"embedded", "redis"} {
		for _, design := range []string{"list", "stream"} {
			t.Run(target+"/"+design, func(t *testing.T) {
				if target == "redis" {
					needRedis(t)
				}
				ctx := context.Background()
				reg, err := engines.Lookup(target)
				if err != nil {
					t.Fatal(err)
				}
				spec := engines.Spec{RunID: fmt.Sprintf("t%d", time.Now().UnixNano()), Design: design, Producers: 1, Consumers: 1,
					InFlight: senders, Options: Options{List: ListOptions{Count: 50},
						Stream: StreamOptions{Count: 50, Block: 100 * time.Millisecond, Ack: "after", GroupStart: "0"}}}
				eng, p := setUpEngine(t, ctx, reg, spec)
				c, err := eng.NewConsumer(ctx, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				body := func(seq uint64) []byte {
					b := binary.BigEndian.AppendUint64(make([]byte, 0, 256), seq)
					for len(b) < 256 {
						b = append(b, byte(seq*7+uint64(len(b))))
					}
					return b
				}
				var wg sync.WaitGroup
				for s := range senders {
					wg.Add(1)
					go func() {
						defer wg.Done()
						payloads := make([][]byte, batch)
						errs := make([]error, batch)
						for n := range batches {
							for i := range payloads {
								payloads[i] = body(uint64((s*batches+n)*batch + i))
							}
							p.Send(ctx, payloads, errs)
							for _, err := range errs {
								if err != nil {
									t.Error(err)
								}
							}
							// The runner may reuse a batch's memory once Send returns.
							for i := range payloads {
								clear(payloads[i])
							}
						}
					}()
				}
				const total = senders * batches * batch
				seen := make([]bool, total)
				got := 0
				deadline := time.Now().Add(30 * time.Second)
				for got < total && time.Now().Before(deadline) {
					ds, err := c.Receive(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, d := range ds {
						seq := binary.BigEndian.Uint64(d.Payload)
						if seq >= total || !bytes.Equal(d.Payload, body(seq)) {
							t.Fatalf("payload of seq %d not intact", seq)
						}
						if seen[seq] {
							t.Fatalf("seq %d delivered twice", seq)
						}
						seen[seq] = true
					}
					got += len(ds)
					if err := c.Ack(ctx, ds); err != nil {
						t.Fatal(err)
					}
				}
				wg.Wait()
				if got != total {
					t.Fatalf("delivered %d of %d", got, total)
				}
				if design == "stream" {
					e := eng.(interface{ redisClient() *redis.Client }).redisClient()
					pending, err := e.XPending(ctx, streamKey(spec), streamGroups(spec)[0]).Result()
					if err != nil {
						t.Fatal(err)
					}
					if pending.Count != 0 {
						t.Fatalf("%d entries left pending after their XACK", pending.Count)
					}
				}
			})
		}
	}
}

// redisClient is the engine's client, for tests (promoted to every target's engine type).
func (e *engine) redisClient() *redis.Client { return e.client }
