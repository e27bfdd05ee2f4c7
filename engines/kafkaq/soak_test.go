package kafkaq

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"qbench/engines"
)

// Repeated leader kills under continuous acks=all writes on a three-node cluster with
// min.insync.replicas 2: after every round (SIGKILL the leader, restart it, wait for the full
// ISR) not one acknowledged write is missing at the end. Several minutes: QBENCH_SOAK=1 only.
func TestSoakRepeatedLeaderKills(t *testing.T) {
	if os.Getenv("QBENCH_SOAK") != "1" {
		t.Skip("soak: set QBENCH_SOAK=1")
	}
	needBroker(t, sharedErr)
	t.Setenv("QBENCH_KAFKA_DATA", t.TempDir())
	reg, _ := engines.Lookup("kafka")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	eng, err := reg.New(ctx, engines.Spec{RunID: fmt.Sprintf("soak-%d", os.Getpid()), Design: Design, Producers: 1, Consumers: 1,
		Options: kafkaOptions(t, "brokers: 3\nacks: all\nmin_insync_replicas: 2\npartitions: 1")})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	m := eng.(*managed)
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	opened := openConsumers(t, eng, 1)
	defer closeAll(t, opened)
	cs := throughFaults(t, opened)

	p, err := eng.NewProducer(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		acked = map[uint64]bool{}
		fails int
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for seq := uint64(0); ; seq += 10 {
			select {
			case <-stop:
				return
			default:
			}
			ps, errs := make([][]byte, 10), make([]error, 10)
			for i := range ps {
				ps[i] = payload(0, seq+uint64(i))
			}
			p.Send(ctx, ps, errs)
			mu.Lock()
			for i, err := range errs {
				if err == nil {
					acked[seq+uint64(i)] = true
				} else {
					fails++
				}
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	const rounds = 5
	for round := range rounds {
		time.Sleep(2 * time.Second)
		began := time.Now()
		ch, err := m.KillLeader(ctx, true)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		t.Logf("round %d: killed %d, leader now %d after %v", round, ch.Node, ch.NewLeader, time.Since(began).Round(time.Millisecond))
		if err := m.RestartNode(ctx, ch.Node); err != nil {
			t.Fatal(err)
		}
		waitHealth(t, m, 60*time.Second, "full ISR", func(c map[string]int64) bool { return c["isr_size.p0"] == 3 })
	}
	close(stop)
	<-done
	p.Close()
	mu.Lock()
	defer mu.Unlock()
	recs := consume(t, cs, len(acked), true, time.Second)
	seen := map[uint64]int{}
	for _, r := range recs {
		seen[r.seq]++
	}
	lost, dup := 0, 0
	for seq := range acked {
		if seen[seq] == 0 {
			lost++
		}
	}
	for _, c := range seen {
		dup += max(c-1, 0)
	}
	t.Logf("%d rounds: %d acknowledged, %d failed sends, %d duplicates, %d lost", rounds, len(acked), fails, dup, lost)
	if lost != 0 {
		t.Errorf("%d acknowledged writes lost across %d leader kills with acks=all, min.insync.replicas 2", lost, rounds)
	}
}
