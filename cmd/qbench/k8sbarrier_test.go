package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines/server"
)

// The barrier through the engine: segments that all come start at one start, written once; when
// some never come, the ready ones start after the timeout, at one start too; a segment that comes
// after the start passed is refused as a usage error (exit 2, the Job's FailIndex rule).
func TestK8sBarrier(t *testing.T) {
	srv := server.New(server.Config{})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	quiet := func(string, ...any) {}

	for _, tc := range []struct {
		name          string
		count, arrive int
		timeout       time.Duration
	}{
		{"all ready", 3, 3, time.Minute},
		{"one never comes", 3, 2, 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runID := "barrier-" + tc.name
			starts := make([]time.Time, tc.arrive)
			errs := make([]error, tc.arrive)
			var wg sync.WaitGroup
			for i := range tc.arrive {
				wg.Add(1)
				go func() {
					defer wg.Done()
					starts[i], errs[i] = waitBarrier(ctx, rdb, runID, i, tc.count, tc.timeout, 2*time.Second, quiet)
				}()
			}
			wg.Wait()
			for i := range tc.arrive {
				if errs[i] != nil {
					t.Fatalf("segment %d: %v", i, errs[i])
				}
				if !starts[i].Equal(starts[0]) || !starts[i].After(time.Now()) {
					t.Errorf("segment %d starts at %s, segment 0 at %s: want one start in the future", i, starts[i], starts[0])
				}
			}
			if at, ok, err := gateStart(ctx, rdb, runID); err != nil || !ok || !at.Equal(starts[0]) {
				t.Errorf("the engine's start %s (%v, %v), the segments' %s", at, ok, err, starts[0])
			}
		})
	}

	t.Run("late", func(t *testing.T) {
		_, key := gateKeys("late")
		if err := rdb.Set(ctx, key, time.Now().Add(-5*time.Second).UnixMilli(), time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		_, err := waitBarrier(ctx, rdb, "late", 1, 2, time.Minute, time.Second, quiet)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Fatalf("a segment after the start: %v, want a usage error (exit 2)", err)
		}
	})
}
