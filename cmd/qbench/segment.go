package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"qbench/bench"
	"qbench/results"
	"qbench/scenarios"
)

// segmentFlags are qbench run's flags for a run from several machines: each machine runs one
// segment (bench.SegmentOptions), and qbench merge joins their results.
func segmentFlags(cmd *cobra.Command) {
	cmd.Flags().String("segment", "", "run only segment i/N of the scenario (its share of producers, consumers and rate), e.g. 0/4; needs --start-at")
	cmd.Flags().String("start-at", "", "the instant every segment starts at: RFC 3339 (2026-12-01T10:00:00Z) or unix milliseconds")
	cmd.Flags().String("run-id", "", "the run ID (names keys and topics; all segments of a run share it); default: derived from the scenario and --start-at")
	cmd.Flags().Bool("teardown-only", false, "remove what the run with --run-id created on the engine, and run nothing (after all segments are done)")
}

// parseStartAt reads --start-at: RFC 3339, or unix milliseconds, or @FILE holding either (the
// start a readiness barrier wrote, qbench k8s barrier).
func parseStartAt(s string) (time.Time, error) {
	if file, ok := strings.CutPrefix(s, "@"); ok {
		raw, err := os.ReadFile(file)
		if err != nil {
			return time.Time{}, fmt.Errorf("--start-at %s: %w", s, err)
		}
		s = strings.TrimSpace(string(raw))
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at %q: want RFC 3339 (2026-12-01T10:00:00Z) or unix milliseconds", s)
	}
	return t, nil
}

// startAtSlack is how far in the past --start-at may be: a segment started a little late
// still starts with the others; one started later would not run at the same time as they did.
const startAtSlack = time.Second

// applySegment reads the segment flags into opts. done says the command has done all it had to
// (--teardown-only).
func applySegment(cmd *cobra.Command, sc *scenarios.Scenario, opts *bench.Options) (done bool, err error) {
	seg, _ := cmd.Flags().GetString("segment")
	startAt, _ := cmd.Flags().GetString("start-at")
	runID, _ := cmd.Flags().GetString("run-id")
	teardown, _ := cmd.Flags().GetBool("teardown-only")
	opts.RunID = runID
	if teardown {
		if runID == "" && startAt == "" {
			return true, usageError{errors.New("--teardown-only needs the run's --run-id (or the --start-at it was derived from)")}
		}
		if runID == "" {
			at, err := parseStartAt(startAt)
			if err != nil {
				return true, usageError{err}
			}
			runID = bench.SegmentRunID(sc, at)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := bench.Teardown(ctx, sc, runID); err != nil {
			return true, err
		}
		fmt.Fprintf(os.Stderr, "qbench: removed run %s from %s\n", runID, sc.Engine)
		return true, nil
	}
	if seg == "" {
		if startAt != "" {
			return false, usageError{errors.New("--start-at is for segmented runs: give --segment i/N too")}
		}
		return false, nil
	}
	i, n, err := bench.ParseSegment(seg)
	if err != nil {
		return false, usageError{err}
	}
	if startAt == "" {
		return false, usageError{errors.New("--segment needs --start-at: every segment starts at the same instant")}
	}
	at, err := parseStartAt(startAt)
	if err != nil {
		return false, usageError{err}
	}
	if late := time.Since(at); late > startAtSlack {
		return false, usageError{fmt.Errorf("--start-at %s is %s in the past: the segments would not start together", at.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond))}
	}
	if b, _ := cmd.Flags().GetString("baseline"); b != "" {
		return false, usageError{errors.New("--baseline compares a whole run: merge the segments (qbench merge) and compare the merged result")}
	}
	g := bench.SegmentOptions{Index: i, Count: n, StartAt: at}
	if err := bench.CheckSegment(sc, g); err != nil {
		return false, usageError{err}
	}
	opts.Segment = &g
	return false, nil
}

// refuseSegmentedSweep: a matrix or repetitions are several runs; a segment is part of one.
func refuseSegmentedSweep(cmd *cobra.Command) error {
	if seg, _ := cmd.Flags().GetString("segment"); seg != "" {
		return usageError{errors.New("--segment runs part of one run; a matrix: or repeat: scenario is several: run each cell as its own scenario")}
	}
	return nil
}

// mergeSegments is qbench merge for segments' partial results: refused (exit 2) unless they are
// exactly the N segments of one run.
func mergeSegments(rs []*results.Result, allowMissing bool) (*results.Result, error) {
	merge := results.MergeSegmentsCosted
	if allowMissing {
		merge = func(rs []*results.Result, join results.LedgerJoin, cost results.FaultJoin) (*results.Result, error) {
			return results.MergeSegmentsPartial(rs, join, bench.JoinPartialSegmentLedgers, cost)
		}
	}
	m, err := merge(rs, bench.JoinSegmentLedgers, bench.CostSegmentFaults)
	if err != nil {
		return nil, usageError{err}
	}
	return m, nil
}

// waitForResults waits until every path holds a complete result (segments still running write
// theirs at the end), up to wait, and returns the paths. With allowMissing, the paths still
// without a result at the end are left out, each named on stderr.
func waitForResults(paths []string, wait time.Duration, allowMissing bool) ([]string, error) {
	deadline := time.Now().Add(wait)
	var present []string
	for _, p := range paths {
		for {
			_, err := results.ReadFile(p)
			if err == nil {
				present = append(present, p)
				break
			}
			if time.Now().After(deadline) {
				if allowMissing {
					fmt.Fprintf(os.Stderr, "qbench: --wait %s: %s is not there: merged as missing\n", wait, p)
					break
				}
				return nil, fmt.Errorf("--wait %s: %s is not there yet: %w", wait, p, err)
			}
			time.Sleep(time.Second)
		}
	}
	return present, nil
}
