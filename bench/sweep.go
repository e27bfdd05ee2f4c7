package bench

import (
	"context"
	"errors"
	"fmt"
	"math"

	"qbench/results"
	"qbench/scenarios"
)

// CellResult is one cell of a sweep: its result (repetitions merged) and each run's.
type CellResult struct {
	Cell   scenarios.Cell
	Result *results.Result
	Runs   []*results.Result
}

// SweepProgress is reported before each run of a sweep.
type SweepProgress struct {
	Cell, Cells int // 1-based
	Name        string
	Rep, Reps   int // 1-based
}

// SweepOptions tune a sweep.
type SweepOptions struct {
	Options
	// OnRun, when set, is called before each run.
	OnRun func(SweepProgress)
	// OnCell, when set, is called with each finished cell (to write it at once).
	OnCell func(CellResult) error
	// Stream, when set, gives each run its series sink (a checkpointed file, so that a sweep
	// killed in a long cell leaves that cell's seconds) and a function called when the run
	// returns, with its result (nil when it returned none).
	Stream func(SweepProgress) (SeriesSink, func(*results.Result))
}

// Sweep runs every cell of sc's matrix, each repeat: times, merging the repetitions of a cell
// (results.MergeRepetitions keeps each one's summary, for noise-aware gates). Cancelling stop
// ends the current run early and runs no further ones; the cells finished so far are returned.
func Sweep(ctx, stop context.Context, sc *scenarios.Scenario, opts SweepOptions) ([]CellResult, error) {
	cells, err := sc.Cells()
	if err != nil {
		return nil, err
	}
	reps := max(1, sc.Repeat)
	var out []CellResult
	for i, c := range cells {
		cr := CellResult{Cell: c}
		for rep := 1; rep <= reps; rep++ {
			if stop.Err() != nil {
				break
			}
			p := SweepProgress{Cell: i + 1, Cells: len(cells), Name: c.Name, Rep: rep, Reps: reps}
			if opts.OnRun != nil {
				opts.OnRun(p)
			}
			o := opts.Options
			o.RunID = ""
			o.Cell = c.Name
			ended := func(*results.Result) {}
			if opts.Stream != nil {
				o.Stream, ended = opts.Stream(p)
			}
			res, err := Run(ctx, stop, c.Scenario, o)
			ended(res)
			if err != nil {
				return out, fmt.Errorf("cell %s: %w", c.Name, err)
			}
			cr.Runs = append(cr.Runs, res)
		}
		if len(cr.Runs) == 0 {
			break
		}
		cr.Result = cr.Runs[0]
		if len(cr.Runs) > 1 {
			if cr.Result, err = results.Merge(cr.Runs, results.MergeOptions{Mode: results.MergeRepetitions}); err != nil {
				return out, fmt.Errorf("cell %s: %w", c.Name, err)
			}
		}
		out = append(out, cr)
		if opts.OnCell != nil {
			if err := opts.OnCell(cr); err != nil {
				return out, err
			}
		}
		if stop.Err() != nil {
			break
		}
	}
	return out, nil
}

// Probe runs the scenario at one rate and says whether it met the objective.
type Probe func(ctx context.Context, rate float64) (bool, error)

// SearchStep is one probe of a rate search.
type SearchStep struct {
	Rate float64
	Pass bool
}

// SearchLimits bound a rate search.
type SearchLimits struct {
	// Low is the first rate tried; High the highest (0: no ceiling but MaxRuns).
	Low, High float64
	// Precision stops the bisection when the gap between the best passing and the lowest failing
	// rate is at most this fraction of the passing one (0.05 default).
	Precision float64
	// MaxRuns bounds the probes (20 default).
	MaxRuns int
}

// ErrSearchStopped is returned when the probe's context ends a search.
var ErrSearchStopped = errors.New("rate search stopped")

// SearchRate finds the highest rate that meets the objective: it doubles from Low until a rate
// fails (or High passes), then bisects between the highest pass and the lowest failure. It
// returns the best passing rate (0 if Low fails), the lowest failing rate (0 if none failed) and
// every step. Rates are whole messages per second. The probe decides pass or fail, so the
// schedule is tested without running anything.
func SearchRate(ctx context.Context, probe Probe, lim SearchLimits) (best, failedAt float64, steps []SearchStep, err error) {
	if lim.Low <= 0 {
		return 0, 0, nil, fmt.Errorf("rate search: the lowest rate must be positive (got %g)", lim.Low)
	}
	if lim.High > 0 && lim.High < lim.Low {
		return 0, 0, nil, fmt.Errorf("rate search: highest rate %g is below the lowest %g", lim.High, lim.Low)
	}
	if lim.Precision <= 0 {
		lim.Precision = 0.05
	}
	if lim.MaxRuns <= 0 {
		lim.MaxRuns = 20
	}
	try := func(rate float64) (bool, error) {
		if ctx.Err() != nil {
			return false, ErrSearchStopped
		}
		ok, err := probe(ctx, rate)
		if err != nil {
			return false, err
		}
		steps = append(steps, SearchStep{Rate: rate, Pass: ok})
		return ok, nil
	}
	// Step up.
	rate := math.Round(lim.Low)
	for {
		ok, err := try(rate)
		if err != nil {
			return best, failedAt, steps, err
		}
		if !ok {
			failedAt = rate
			break
		}
		best = rate
		if lim.High > 0 && rate >= lim.High {
			return best, 0, steps, nil
		}
		if len(steps) >= lim.MaxRuns {
			return best, 0, steps, nil
		}
		rate *= 2
		if lim.High > 0 && rate > lim.High {
			rate = lim.High
		}
	}
	// Bisect.
	for best > 0 && len(steps) < lim.MaxRuns && (failedAt-best)/best > lim.Precision {
		mid := math.Round((best + failedAt) / 2)
		if mid <= best || mid >= failedAt {
			break
		}
		ok, err := try(mid)
		if err != nil {
			return best, failedAt, steps, err
		}
		if ok {
			best = mid
		} else {
			failedAt = mid
		}
	}
	return best, failedAt, steps, nil
}
