package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"qbench/bench"
	"qbench/scenarios"
)

// The readiness barrier of qbench k8s goes through the engine under test, as no coordinator of
// qbench's own should: each segment's pod adds its index to a Redis set once it is running (its
// image pulled, its scenario mounted); the first to see the set complete writes the shared start,
// --lead after the engine's clock, with SET NX, so every segment reads the same one. A segment
// that is not ready within --timeout is left behind: the first segment to time out writes the
// start for those ready. A pod that comes to the barrier after the start passed (a retry) is
// refused with exit 2, which the Job's failure policy turns into a failed index: that segment is
// missing from the merge, and the run goes on.

// gateKeys are the barrier's keys for a run: the set of ready indices and the start (unix ms on
// the engine's clock). They expire a day after, and the tear-down removes them.
func gateKeys(runID string) (ready, start string) {
	return "qbench:" + runID + ":gate:ready", "qbench:" + runID + ":gate:start"
}

const gateTTL = 24 * time.Hour

// barrierClient connects to a redis-url scenario's server (host:port, or a redis:// or
// rediss:// URL as go-redis parses it).
func barrierClient(sc *scenarios.Scenario) (*redis.Client, error) {
	if !barrierEngine(sc) {
		return nil, fmt.Errorf("engine %s has no readiness barrier: use --start-at", sc.Engine)
	}
	if !strings.Contains(sc.Address, "://") {
		return redis.NewClient(&redis.Options{Addr: sc.Address}), nil
	}
	opts, err := redis.ParseURL(sc.Address)
	if err != nil {
		return nil, errors.New("the scenario's address does not parse as a redis URL") // never echo a password
	}
	return redis.NewClient(opts), nil
}

// gateStart reads the start the barrier released, if it did.
func gateStart(ctx context.Context, rdb *redis.Client, runID string) (time.Time, bool, error) {
	_, key := gateKeys(runID)
	v, err := rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("%s holds %q, not a start time", key, v)
	}
	return time.UnixMilli(ms), true, nil
}

// releaseGate writes the shared start, lead after the engine's clock, unless one is written.
func releaseGate(ctx context.Context, rdb *redis.Client, runID string, lead time.Duration) error {
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		return err
	}
	_, key := gateKeys(runID)
	return rdb.SetNX(ctx, key, now.Add(lead).UnixMilli(), gateTTL).Err()
}

// barrierPoll is how often a waiting segment asks the engine: a few commands a second per pod.
const barrierPoll = 100 * time.Millisecond

// waitBarrier is one segment's wait at the barrier; it returns the shared start.
func waitBarrier(ctx context.Context, rdb *redis.Client, runID string, index, count int, timeout, lead time.Duration, logf func(string, ...any)) (time.Time, error) {
	readyKey, _ := gateKeys(runID)
	deadline := time.Now().Add(timeout)
	joined := false
	for {
		at, ok, err := gateStart(ctx, rdb, runID)
		if err != nil {
			return time.Time{}, err
		}
		if ok {
			now, err := rdb.Time(ctx).Result()
			if err != nil {
				return time.Time{}, err
			}
			if late := now.Sub(at); late > startAtSlack {
				return time.Time{}, usageError{fmt.Errorf("segment %d/%d: the barrier released the start %s, %s ago on the engine's clock: this segment missed it and is left out of the run",
					index, count, at.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond))}
			}
			return at, nil
		}
		if !joined {
			if err := rdb.SAdd(ctx, readyKey, index).Err(); err != nil {
				return time.Time{}, err
			}
			rdb.Expire(ctx, readyKey, gateTTL)
			joined = true
			logf("segment %d/%d ready; waiting for the others", index, count)
		}
		ready, err := rdb.SCard(ctx, readyKey).Result()
		if err != nil {
			return time.Time{}, err
		}
		switch {
		case ready >= int64(count):
			err = releaseGate(ctx, rdb, runID, lead)
		case time.Now().After(deadline):
			logf("segment %d/%d: %d of %d segments ready after %s: starting without the others", index, count, ready, count, timeout)
			err = releaseGate(ctx, rdb, runID, lead)
		default:
			select {
			case <-ctx.Done():
				return time.Time{}, ctx.Err()
			case <-time.After(barrierPoll):
			}
		}
		if err != nil {
			return time.Time{}, err
		}
	}
}

func k8sBarrierCmd() *cobra.Command {
	var runID, segment, out string
	var timeout, lead time.Duration
	cmd := &cobra.Command{
		Use:   "barrier SCENARIO.yaml --run-id ID --segment i/N --out FILE",
		Short: "Wait until every segment of a run is ready, through the engine, and write the shared start to FILE (a pod's init container)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := loadScenario(args[0])
			if err != nil {
				return err
			}
			i, n, err := bench.ParseSegment(segment)
			if err != nil {
				return usageError{err}
			}
			if runID == "" || out == "" {
				return usageError{errors.New("barrier needs --run-id and --out")}
			}
			rdb, err := barrierClient(sc)
			if err != nil {
				return usageError{err}
			}
			defer rdb.Close()
			at, err := waitBarrier(cmd.Context(), rdb, runID, i, n, timeout, lead, func(f string, a ...any) { fmt.Fprintf(os.Stderr, "qbench: "+f+"\n", a...) })
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "qbench: segment %d/%d starts at %s\n", i, n, at.UTC().Format(time.RFC3339Nano))
			return os.WriteFile(out, []byte(strconv.FormatInt(at.UnixMilli(), 10)+"\n"), 0o644)
		},
	}
	cmd.Flags().StringVar(&runID, "run-id", "", "the run's ID")
	cmd.Flags().StringVar(&segment, "segment", "", "this pod's segment, i/N")
	cmd.Flags().StringVar(&out, "out", "", "where to write the start (unix ms), for qbench run --start-at=@FILE")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait for every segment; then start with those ready")
	cmd.Flags().DurationVar(&lead, "lead", 10*time.Second, "how long after the release the segments start")
	return cmd
}

func k8sTeardownCmd() *cobra.Command {
	var runID, startAt string
	var after, barrierTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "teardown SCENARIO.yaml --run-id ID --after D (--barrier-timeout T | --start-at T)",
		Short: "Wait until a run's time is over, whatever its segments did, then remove its keys or topic from the engine (a Job)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := loadScenario(args[0])
			if err != nil {
				return err
			}
			if runID == "" {
				return usageError{errors.New("teardown needs --run-id")}
			}
			ctx := cmd.Context()
			var start time.Time
			if startAt != "" {
				if start, err = parseStartAt(startAt); err != nil {
					return usageError{err}
				}
			} else {
				rdb, err := barrierClient(sc)
				if err != nil {
					return usageError{err}
				}
				defer rdb.Close()
				// The start the barrier released; none by the end of its timeout means no
				// segment ever came: tear down what set-up may have made all the same.
				deadline := time.Now().Add(barrierTimeout)
				for {
					at, ok, err := gateStart(ctx, rdb, runID)
					if err != nil {
						return err
					}
					if ok {
						start = at
						break
					}
					if time.Now().After(deadline) {
						start = time.Now()
						break
					}
					time.Sleep(time.Second)
				}
				defer func() {
					ready, key := gateKeys(runID)
					rdb.Del(context.WithoutCancel(ctx), ready, key)
				}()
			}
			if d := time.Until(start.Add(after)); d > 0 {
				fmt.Fprintf(os.Stderr, "qbench: tearing run %s down at %s\n", runID, start.Add(after).UTC().Format(time.RFC3339))
				time.Sleep(d)
			}
			tctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := bench.Teardown(tctx, sc, runID); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "qbench: removed run %s from %s\n", runID, sc.Engine)
			return nil
		},
	}
	cmd.Flags().StringVar(&runID, "run-id", "", "the run's ID")
	cmd.Flags().StringVar(&startAt, "start-at", "", "the run's absolute start (no barrier)")
	cmd.Flags().DurationVar(&after, "after", 0, "how long after the start the run is over (warm-up, duration, drain and a margin)")
	cmd.Flags().DurationVar(&barrierTimeout, "barrier-timeout", 10*time.Minute, "how long to wait for the barrier's start before tearing down anyway")
	return cmd
}
