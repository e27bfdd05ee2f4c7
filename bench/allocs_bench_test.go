package bench_test

import (
	"context"
	"os/exec"
	"runtime/metrics"
	"testing"

	"qbench/bench"
)

// BenchmarkRunAllocsPerMessage runs short open-loop scenarios and reports what the whole process
// allocated per message (sent + delivered) and how many GC cycles ran: the garbage that sets how
// often the GC stops the world in the producers' schedule (issue 16's send-delay tail). Nothing
// timed is asserted; ns/op is one run's wall time and means nothing. Run with
//
//	go test ./bench/ -run '^$' -bench RunAllocsPerMessage -benchtime 1x
//
// nullq is the generator alone (in process, no network); the redis cases (list, stream,
// reliable-list, pubsub) are the one-producer-10k shape on a redis-server of its own (skipped
// without redis-server).
func BenchmarkRunAllocsPerMessage(b *testing.B) {
	cases := []struct{ name, yaml string }{
		{"nullq", "engine: nullq\nrate: 20000\nproducers: 2\nconsumers: 2\nbatch: 16\nduration: 3s\nwarmup: 0s\n"},
		{"redis-list", "engine: redis\ndesign: list\nrate: 10000\nproducers: 1\nconsumers: 1\nbatch: 16\nin_flight: 8\nmessage_size: 256\nduration: 3s\nwarmup: 0s\n"},
		{"redis-stream", "engine: redis\ndesign: stream\nrate: 10000\nproducers: 1\nconsumers: 1\nbatch: 16\nin_flight: 8\nmessage_size: 256\nduration: 3s\nwarmup: 0s\n"},
		{"redis-reliable-list", "engine: redis\ndesign: reliable-list\nrate: 10000\nproducers: 1\nconsumers: 1\nbatch: 16\nin_flight: 8\nmessage_size: 256\nduration: 3s\nwarmup: 0s\n"},
		{"redis-pubsub", "engine: redis\ndesign: pubsub\nrate: 10000\nproducers: 1\nconsumers: 1\nbatch: 16\nin_flight: 8\nmessage_size: 256\nduration: 3s\nwarmup: 0s\n"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.name != "nullq" {
				if _, err := exec.LookPath("redis-server"); err != nil {
					b.Skip("no redis-server")
				}
			}
			samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"}, {Name: "/gc/cycles/total:gc-cycles"}}
			var bytes, objects, cycles, messages float64
			for range b.N {
				sc := scenario(b, c.yaml)
				metrics.Read(samples)
				before := [3]uint64{samples[0].Value.Uint64(), samples[1].Value.Uint64(), samples[2].Value.Uint64()}
				res, err := bench.Run(context.Background(), context.Background(), sc, bench.Options{Logf: b.Logf})
				if err != nil {
					b.Fatal(err)
				}
				metrics.Read(samples)
				bytes += float64(samples[0].Value.Uint64() - before[0])
				objects += float64(samples[1].Value.Uint64() - before[1])
				cycles += float64(samples[2].Value.Uint64() - before[2])
				l := res.Summary.Ledger
				messages += float64(l.Sent + l.Delivered)
			}
			if messages == 0 {
				b.Fatal("no messages")
			}
			b.ReportMetric(bytes/messages, "B/msg")
			b.ReportMetric(objects/messages, "allocs/msg")
			b.ReportMetric(cycles/float64(b.N), "gc/run")
		})
	}
}
