package bench_test

import (
	"fmt"
	"qbench/bench"
	"testing"
)

// Message sizes follow message_size on every Redis target and Kafka's path alike: the bytes
// acknowledged and delivered over the series are exactly the drawn sizes of the messages sent,
// and the summary reports bytes/s beside msg/s.
func TestSizedRunCountsBytes(t *testing.T) {
	for _, target := range []string{"embedded", "redis"} {
		t.Run(target, func(t *testing.T) {
			needTarget(t, target)
			sc := scenario(t, fmt.Sprintf(`
engine: %s
design: stream
producers: 2
consumers: 2
rate: 2000
duration: 1500ms
batch: 4
message_size:
  dist: weighted
  sizes: [{size: 64, weight: 3}, {size: 4096, weight: 1}]
payload: {content: compressible, ratio: 4}
`, target))
			res := run(t, sc)
			l := res.Summary.Ledger
			if l.Acked != 3000 || l.Lost != 0 || l.Duplicates != 0 {
				t.Fatalf("ledger %+v", l)
			}
			sizer := bench.NewSizer(sc.MessageSize, sc.Seed)
			var want int64
			for p := 0; p < sc.Producers; p++ {
				for seq := uint64(0); seq < 1500; seq++ {
					want += int64(sizer.Size(uint32(p), seq))
				}
			}
			var acked, delivered int64
			for _, iv := range res.Series {
				acked += iv.AckedBytes
				delivered += iv.DeliveredBytes
			}
			if acked != want || delivered != want {
				t.Fatalf("bytes acked %d, delivered %d, want the drawn %d", acked, delivered, want)
			}
			// Mean size is (3 x 64 + 4096) / 4 = 1072 B; 2000 msg/s is about 2.1 MB/s.
			if r := res.Summary.ProduceBytesRate / res.Summary.ProduceRate; r < 900 || r > 1250 {
				t.Fatalf("bytes per message %.0f (%.0f B/s over %.0f msg/s), want about 1072", r, res.Summary.ProduceBytesRate, res.Summary.ProduceRate)
			}
			if r := res.Summary.DeliverBytesRate / res.Summary.DeliverRate; r < 900 || r > 1250 {
				t.Fatalf("delivered bytes per message %.0f (%.0f B/s over %.0f msg/s), want about 1072", r, res.Summary.DeliverBytesRate, res.Summary.DeliverRate)
			}
		})
	}
}
