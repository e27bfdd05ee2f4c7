package kafkaq

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"qbench/engines"
)

// BenchmarkSend measures one producer's synchronous Sends on the shared broker: a rough figure
// for the README, not the suite's measurement (that is qbench run with a kafka scenario).
//
//	go test -run '^$' -bench Send -benchtime 20000x ./engines/kafkaq
func BenchmarkSend(b *testing.B) {
	for _, acks := range []string{"none", "leader", "all", "all+flush"} {
		for _, batch := range []int{1, 100} {
			b.Run(fmt.Sprintf("acks=%s/batch=%d", acks, batch), func(b *testing.B) {
				section := "partitions: 1\nacks: " + acks
				if acks == "all+flush" {
					// fsync before every produce reply: the topic-level log.flush.interval.messages=1.
					section = "partitions: 1\nacks: all\nflush_messages: 1"
				}
				e := newTestEngine(b, engines.Spec{Producers: 1, Consumers: 1, Options: kafkaOptions(b, section)})
				ctx := context.Background()
				p, err := e.NewProducer(ctx, 0)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				ps := make([][]byte, batch)
				for i := range ps {
					ps[i] = payload(0, uint64(i))
				}
				errs := make([]error, batch)
				b.ResetTimer()
				began := time.Now()
				for sent := 0; sent < b.N; sent += batch {
					n := min(batch, b.N-sent)
					p.Send(ctx, ps[:n], errs[:n])
					for _, err := range errs[:n] {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "msg/s")
			})
		}
	}
}

// BenchmarkEndToEnd produces b.N messages (acks=all) while two consumers in a group receive
// and commit them, synchronously in Ack or every 100 ms; it stops when all have arrived.
//
//	go test -run '^$' -bench EndToEnd -benchtime 20000x ./engines/kafkaq
func BenchmarkEndToEnd(b *testing.B) {
	const consumers = 2
	for _, batch := range []int{1, 100} {
		for _, commit := range []string{"0s", "100ms"} {
			b.Run(fmt.Sprintf("batch=%d/commit_interval=%s", batch, commit), func(b *testing.B) {
				e := newTestEngine(b, engines.Spec{Producers: 1, Consumers: consumers,
					Options: kafkaOptions(b, "acks: all\ncommit_interval: "+commit)})
				cs := openConsumers(b, e, consumers)
				defer closeAll(b, cs)
				b.ResetTimer()
				began := time.Now()
				done := make(chan []rec)
				go func() { done <- consume(b, cs, b.N, true, 0) }()
				produce(b, e, 1, b.N, batch, 0)
				recs := <-done
				took := time.Since(began)
				b.StopTimer()
				checkExactlyOnce(b, recs, 1, b.N, 0)
				b.ReportMetric(float64(b.N)/took.Seconds(), "msg/s")
			})
		}
	}
}

// BenchmarkParallelSend: producers sending one message per Send at once, acks=all, 4 partitions:
// do they scale, or serialize on a shared connection?
//
//	go test -run '^$' -bench ParallelSend -benchtime 4000x ./engines/kafkaq
func BenchmarkParallelSend(b *testing.B) {
	for _, producers := range []int{1, 4} {
		b.Run(fmt.Sprintf("producers=%d", producers), func(b *testing.B) {
			e := newTestEngine(b, engines.Spec{Producers: producers, Consumers: 4, Options: kafkaOptions(b, "acks: all")})
			ctx := context.Background()
			b.ResetTimer()
			began := time.Now()
			var wg sync.WaitGroup
			for id := range producers {
				p, err := e.NewProducer(ctx, id)
				if err != nil {
					b.Fatal(err)
				}
				wg.Go(func() {
					defer p.Close()
					errs := make([]error, 1)
					for i := 0; i < b.N/producers; i++ {
						p.Send(ctx, [][]byte{payload(uint32(id), uint64(i))}, errs)
						if errs[0] != nil {
							b.Error(errs[0])
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "msg/s")
		})
	}
}
