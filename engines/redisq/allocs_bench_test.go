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

// allocDesigns are the designs BenchmarkBatchAllocs and TestBatchAllocs count.
var allocDesigns = []string{"list", "stream", "reliable-list", "pubsub"}

// allocRig is one design's engine on a redis-server of its own, with producer 0, consumer 0 and
// a batch of 16 payloads of 256 B.
type allocRig struct {
	eng      engines.Engine
	p        engines.Producer
	c        engines.Consumer
	payloads [][]byte
	errs     []error
}

// newAllocRig makes the rig for design. A pubsub subscriber would take a whole send benchmark's
// output at once (past the server's output buffer limit), so withConsumer false leaves the
// consumer to startConsumer: publishing to no one costs the producer the same.
func newAllocRig(tb testing.TB, design string, withConsumer bool) *allocRig {
	ctx := context.Background()
	reg, err := engines.Lookup("redis")
	if err != nil {
		tb.Fatal(err)
	}
	spec := engines.Spec{RunID: fmt.Sprintf("b%d", time.Now().UnixNano()), Design: design, Producers: 1, Consumers: 1,
		InFlight: 8, Options: Options{List: ListOptions{Count: 100}, Stream: StreamOptions{Count: 100, Block: 100 * time.Millisecond, Ack: "after", GroupStart: "0"}}}
	r := &allocRig{payloads: make([][]byte, 16), errs: make([]error, 16)}
	if r.eng, err = reg.New(ctx, spec); err != nil {
		tb.Fatal(err)
	}
	if err := r.eng.Setup(ctx); err != nil {
		r.eng.Close()
		tb.Fatal(err)
	}
	if r.p, err = r.eng.NewProducer(ctx, 0); err != nil {
		r.close()
		tb.Fatal(err)
	}
	for i := range r.payloads {
		r.payloads[i] = binary.BigEndian.AppendUint64(make([]byte, 0, 256), uint64(i))[:256]
	}
	if withConsumer {
		r.startConsumer(tb)
	}
	return r
}

func (r *allocRig) startConsumer(tb testing.TB) {
	var err error
	if r.c, err = r.eng.NewConsumer(context.Background(), 0); err != nil {
		tb.Fatal(err)
	}
}

func (r *allocRig) send(tb testing.TB) {
	r.p.Send(context.Background(), r.payloads, r.errs)
	for _, err := range r.errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// drain receives (and acknowledges) want messages.
func (r *allocRig) drain(tb testing.TB, want int) {
	ctx := context.Background()
	for got := 0; got < want; {
		ds, err := r.c.Receive(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		if err := r.c.Ack(ctx, ds); err != nil {
			tb.Fatal(err)
		}
		got += len(ds)
	}
}

func (r *allocRig) close() {
	ctx := context.Background()
	if r.c != nil {
		r.c.Close()
	}
	if r.p != nil {
		r.p.Close()
	}
	r.eng.Teardown(ctx)
	r.eng.Close()
}

// BenchmarkBatchAllocs counts what the Redis paths allocate per batch of 16 payloads of 256 B on a
// redis-server of their own, for the list, stream, reliable-list and pubsub designs: "send" is
// producer.Send alone, "roundtrip" a Send and the Receive (and Ack) calls that deliver its 16.
// Read allocs/op (per batch; /16 per message) and B/op with -benchmem; ns/op is the machine's.
// Run with
//
//	go test ./engines/redisq/ -run '^$' -bench BatchAllocs -benchmem -benchtime 2000x
func BenchmarkBatchAllocs(b *testing.B) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Skip("no redis-server")
	}
	for _, design := range allocDesigns {
		r := newAllocRig(b, design, design != "pubsub")
		b.Run(design+"/send", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				r.send(b)
			}
			b.StopTimer()
			if r.c != nil {
				r.drain(b, b.N*len(r.payloads))
			}
		})
		if r.c == nil {
			r.startConsumer(b)
		}
		b.Run(design+"/roundtrip", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				r.send(b)
				r.drain(b, len(r.payloads))
			}
		})
		r.close()
	}
}
