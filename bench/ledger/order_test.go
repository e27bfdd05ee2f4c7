package ledger

import "testing"

// With the deliveries naming their shard (a Kafka partition, a Redis Cluster shard), the order
// rule holds among messages read from the same shard: a later message read first from another
// partition is what round-robin partitioning does, not a broken promise.
func TestLedgerReorderRuleByDeliveryShard(t *testing.T) {
	type delivery struct {
		shard int
		seq   uint64
	}
	// Each message acknowledged before the next is sent: every later message is owed order.
	cases := []struct {
		name       string
		byDelivery bool
		noOrder    bool
		deliver    []delivery
		want       int64
	}{
		{"one queue: the other partition's later messages first count", false, false,
			[]delivery{{1, 1}, {1, 3}, {0, 0}, {0, 2}}, 2},
		{"by partition: the other partition's later messages first", true, false,
			[]delivery{{1, 1}, {1, 3}, {0, 0}, {0, 2}}, 0},
		{"by partition: the same partition's later message first", true, false,
			[]delivery{{0, 2}, {1, 1}, {0, 0}, {1, 3}}, 1},
		{"by partition: a partition never seen before", true, false,
			[]delivery{{7, 3}, {7, 1}, {0, 0}, {0, 2}}, 1},
		{"no order promised: nothing judged", false, true,
			[]delivery{{0, 3}, {0, 2}, {0, 1}, {0, 0}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := New(1)
			if c.byDelivery {
				l.SetDeliveryShards()
			}
			if c.noOrder {
				l.SetNoOrder()
			}
			for s := uint64(0); s < 4; s++ {
				l.Batch(0, s, 1)
				l.SentBatch(0, s, []error{nil}, []int64{0}, s+1)
			}
			for _, d := range c.deliver {
				if !l.DeliveredOn(0, d.shard, 0, d.seq) {
					t.Fatalf("delivery of %d not first", d.seq)
				}
			}
			got, _ := l.Close(0)
			if got.Reordered != c.want || got.Delivered != 4 {
				t.Fatalf("reordered %d of %d delivered, want %d of 4", got.Reordered, got.Delivered, c.want)
			}
		})
	}
}

// One batch split over two partitions keeps its order per partition only.
func TestLedgerBatchOrderByDeliveryShard(t *testing.T) {
	l := New(1)
	l.SetDeliveryShards()
	l.Batch(0, 0, 4)
	l.SentBatch(0, 0, make([]error, 4), make([]int64, 4), 4)
	// Partition 1 holds 1 and 3, partition 0 holds 0 and 2: 3 before 0 is fine, 2 before 0 not.
	l.DeliveredOn(0, 1, 0, 1)
	l.DeliveredOn(0, 1, 0, 3)
	l.DeliveredOn(0, 0, 0, 2)
	l.DeliveredOn(0, 0, 0, 0)
	if got, _ := l.Close(0); got.Reordered != 1 {
		t.Fatalf("reordered %d, want 1 (0 after its batch-mate 2 on partition 0)", got.Reordered)
	}
}

// The redeliveries of poison messages (never acknowledged on purpose) are poison retries, not
// duplicates, in the totals, in the fault windows and in a segmented run's union.
func TestLedgerCountsPoisonRetriesApart(t *testing.T) {
	mark := func(l *Ledger) {
		l.SentBatch(0, 0, make([]error, 6), make([]int64, 6), 6)
		for _, s := range []uint64{0, 0, 0, 1, 1, 2, 3, 3, 4, 5} { // 0 and 3 poison (every 3)
			l.Delivered(0, s)
		}
	}
	want := Totals{Sent: 6, Acked: 6, Delivered: 6, Deliveries: 10, Duplicates: 1, DuplicatedMessages: 1, PoisonRetries: 3}
	l := New(1)
	l.SetPoison(3)
	mark(l)
	if got, _ := l.Close(0); got != want {
		t.Fatalf("totals\n got %+v\nwant %+v", got, want)
	}
	if w := l.Attribute([]Window{{StartNs: 0, EndNs: 10}}); w[0].Duplicates != 1 {
		t.Fatalf("fault window duplicates %d, want 1 (poison retries are not a fault's)", w[0].Duplicates)
	}
	seg := New(1)
	seg.SetPoison(3)
	mark(seg)
	if got, _ := union(t, seg).Close(0); got != want {
		t.Fatalf("union totals\n got %+v\nwant %+v", got, want)
	}
}
