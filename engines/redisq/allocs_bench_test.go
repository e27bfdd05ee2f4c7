package redisq

import (
	"context"
	"encoding/binary"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"qbench/engines"
)

// BenchmarkBatchAllocs counts what the Redis paths allocate per batch of 16 payloads of 256 B on a
// redis-server of their own, for the list, stream, reliable-list and pubsub designs: "send" is
// producer.Send alone, "roundtrip" a Send and the Receive (and Ack) calls that deliver its 16. Read allocs/op (per batch; /16 per message) and B/op with
// -benchmem; ns/op is the machine's. Run with
//
//	go test ./engines/redisq/ -run '^$' -bench BatchAllocs -benchmem -benchtime 2000x
func BenchmarkBatchAllocs(b *testing.B) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Skip("no redis-server")
	}
	ctx := context.Background()
	reg, err := engines.Lookup("redis")
	if err != nil {
		b.Fatal(err)
	}
	for _, design := range []string{"list", "stream", "reliable-list", "pubsub"} {
		spec := engines.Spec{RunID: fmt.Sprintf("b%d", time.Now().UnixNano()), Design: design, Producers: 1, Consumers: 1,
			InFlight: 8, List: engines.ListOptions{Count: 100}, Stream: engines.StreamOptions{Count: 100, Block: 100 * time.Millisecond, Ack: "after", GroupStart: "0"}}
		eng, err := reg.New(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		if err := eng.Setup(ctx); err != nil {
			b.Fatal(err)
		}
		p, _ := eng.NewProducer(ctx, 0)
		// A pubsub subscriber would take the send case's whole output at once (past the
		// server's output buffer limit); publishing to no one costs the producer the same.
		var c engines.Consumer
		newConsumer := func() {
			if c, err = eng.NewConsumer(ctx, 0); err != nil {
				b.Fatal(err)
			}
		}
		if design != "pubsub" {
			newConsumer()
		}
		payloads := make([][]byte, 16)
		for i := range payloads {
			payloads[i] = binary.BigEndian.AppendUint64(make([]byte, 0, 256), uint64(i))[:256]
		}
		errs := make([]error, len(payloads))
		send := func(b *testing.B) {
			p.Send(ctx, payloads, errs)
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		drain := func(b *testing.B, want int) {
			for got := 0; got < want; {
				ds, err := c.Receive(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Ack(ctx, ds); err != nil {
					b.Fatal(err)
				}
				got += len(ds)
			}
		}
		b.Run(design+"/send", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				send(b)
			}
			b.StopTimer()
			if c != nil {
				drain(b, b.N*len(payloads))
			}
		})
		if c == nil {
			newConsumer()
		}
		b.Run(design+"/roundtrip", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				send(b)
				drain(b, len(payloads))
			}
		})
		c.Close()
		p.Close()
		eng.Teardown(ctx)
		eng.Close()
	}
}
