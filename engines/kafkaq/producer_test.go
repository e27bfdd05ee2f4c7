package kafkaq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"qbench/engines"
)

// Up to in_flight goroutines of the runner call one producer's Send at once: every message of
// every concurrent Send is acknowledged (acks=all) and delivered exactly once, whatever batches
// the Writer made of them, and within a partition each caller's messages keep its order.
func TestConcurrentSendsAllAcknowledgedAndDelivered(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings string
	}{
		{"no linger", "acks: all"},
		{"linger and small batches", "acks: all\nlinger: 5ms\nbatch_size: 2048\nbatch_messages: 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const callers, sends, batch = 16, 40, 10
			e := newTestEngine(t, engines.Spec{Producers: 1, Consumers: 2, InFlight: callers, Options: kafkaOptions(t, tc.settings)})
			cs := openConsumers(t, e, 2)
			defer closeAll(t, cs)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			p, err := e.NewProducer(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			var recs []rec
			done := make(chan struct{})
			go func() {
				defer close(done)
				recs = consume(t, cs, callers*sends*batch, true, 300*time.Millisecond)
			}()
			began := time.Now()
			var wg sync.WaitGroup
			errc := make(chan error, callers)
			for c := range callers {
				wg.Go(func() {
					// Caller c stamps itself as producer c (so that its order within a partition
					// can be checked) and sends batch by batch on buffers it reuses, as the
					// runner does once Send has returned.
					ps := make([][]byte, batch)
					for i := range ps {
						ps[i] = payload(0, 0)
					}
					errs := make([]error, batch)
					for s := range sends {
						for i := range ps {
							copy(ps[i], payload(uint32(c), uint64(s*batch+i)))
						}
						p.Send(ctx, ps, errs)
						if err := errors.Join(errs...); err != nil {
							errc <- fmt.Errorf("caller %d send %d: %w", c, s, err)
							return
						}
					}
				})
			}
			wg.Wait()
			took := time.Since(began)
			close(errc)
			for err := range errc {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			<-done
			// Facts count every answered message once, in batches of at most batch_messages.
			f := e.Facts(ctx).Settings
			total := callers * sends * batch
			if got := f["produce.batched_messages"]; got != fmt.Sprint(total) {
				t.Errorf("produce.batched_messages %q, want %d", got, total)
			}
			var batches int
			fmt.Sscan(f["produce.batches"], &batches)
			if maxPer := e.opts.batchMessages; batches < total/maxPer || batches > total {
				t.Errorf("produce.batches %q: want %d to %d for %d messages of at most %d a batch", f["produce.batches"], total/maxPer, total, total, maxPer)
			}
			t.Logf("%d concurrent callers: %d messages acknowledged in %v", callers, callers*sends*batch, took.Round(time.Millisecond))
			checkExactlyOnce(t, recs, callers, sends*batch, 0)
		})
	}
}

func TestBatchOptions(t *testing.T) {
	for _, tc := range []struct {
		p             string
		wantBytes     int64
		wantMessages  int
		wantErrSubstr string
	}{
		{p: "", wantBytes: defaultBatchBytes, wantMessages: defaultBatchMessages},
		{p: "batch_size: 16384", wantBytes: 16384, wantMessages: defaultBatchMessages},
		{p: "batch_messages: 500\nbatch_size: 65536", wantBytes: 65536, wantMessages: 500},
		{p: "batch_size: 0", wantErrSubstr: "batch_size"},
		{p: "batch_messages: 0", wantErrSubstr: "batch_messages"}, // a wrong type is the scenario decoder's error, with its key
	} {
		o, err := parseSection(tc.p, 1, false)
		if tc.wantErrSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErrSubstr) {
				t.Errorf("%v: err %v, want one naming %s", tc.p, err, tc.wantErrSubstr)
			}
			continue
		}
		if err != nil || o.batchBytes != tc.wantBytes || o.batchMessages != tc.wantMessages {
			t.Errorf("%v: batch.size %d batch.messages %d err %v, want %d and %d", tc.p, o.batchBytes, o.batchMessages, err, tc.wantBytes, tc.wantMessages)
		}
	}
}
