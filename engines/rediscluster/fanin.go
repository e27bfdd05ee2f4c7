package rediscluster

import (
	"context"
	"sync"
	"time"

	"qbench/engines"
)

// fanIn is one consumer reading several shards. No command may cross slots on a cluster
// (XREADGROUP or BLMPOP over several shard keys is refused with CROSSSLOT), so each shard has a
// consumer of its own (redisq's, on the cluster client) blocking on its one key in a goroutine,
// and Receive hands out whichever batch arrives first. A shard's goroutine then waits until the
// next Receive before it reads again: a batch's payloads stay valid until the next Receive, as
// engines.Consumer promises, and Ack (which the runner calls before its next Receive) goes to
// the shard consumer that delivered the batch.
type fanIn struct {
	subs   []engines.Consumer
	out    chan batch
	resume []chan struct{}
	// last is the shard whose batch was handed out last, -1 for none.
	last   int
	cancel context.CancelFunc
	wg     sync.WaitGroup
	timer  *time.Timer
}

type batch struct {
	shard int
	ds    []engines.Delivery
	err   error
}

// onShard is one shard's consumer, naming the shard on each delivery (engines.DeliverySharder).
type onShard struct {
	engines.Consumer
	shard int
}

func (c onShard) Receive(ctx context.Context) ([]engines.Delivery, error) {
	ds, err := c.Consumer.Receive(ctx)
	for i := range ds {
		ds[i].Shard = c.shard
	}
	return ds, err
}

// newFanIn reads subs concurrently; with one sub it is that sub.
func newFanIn(subs []engines.Consumer) engines.Consumer {
	if len(subs) == 1 {
		return subs[0]
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fanIn{subs: subs, out: make(chan batch), last: -1, cancel: cancel, timer: time.NewTimer(time.Hour)}
	f.timer.Stop()
	for i, s := range subs {
		r := make(chan struct{}, 1)
		f.resume = append(f.resume, r)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for {
				ds, err := s.Receive(ctx)
				if ctx.Err() != nil {
					return
				}
				if err == nil && len(ds) == 0 {
					continue
				}
				select {
				case f.out <- batch{i, ds, err}:
				case <-ctx.Done():
					return
				}
				select {
				case <-r:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return f
}

func (f *fanIn) Receive(ctx context.Context) ([]engines.Delivery, error) {
	if f.last >= 0 {
		f.resume[f.last] <- struct{}{}
		f.last = -1
	}
	f.timer.Reset(100 * time.Millisecond)
	defer f.timer.Stop()
	select {
	case b := <-f.out:
		f.last = b.shard
		return b.ds, b.err
	case <-f.timer.C:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fanIn) Ack(ctx context.Context, ds []engines.Delivery) error {
	if f.last < 0 || len(ds) == 0 {
		return nil
	}
	return f.subs[f.last].Ack(ctx, ds)
}

func (f *fanIn) Close() error {
	f.cancel()
	f.wg.Wait()
	var err error
	for _, s := range f.subs {
		if cerr := s.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
