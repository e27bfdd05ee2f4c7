package results

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Index lists the results of a sweep (a matrix, repetitions, a rate search): one entry per cell,
// written as index.json beside the cells' result files.
type Index struct {
	SchemaVersion int         `json:"schema_version"`
	Kind          string      `json:"kind"` // matrix or rate-search
	Scenario      string      `json:"scenario"`
	StartedAt     time.Time   `json:"started_at"`
	Cells         []IndexCell `json:"cells"`
	// Search is set for a rate search.
	Search *SearchOutcome `json:"search,omitempty"`
	// Interrupted is true when the sweep was stopped before every cell ran.
	Interrupted bool `json:"interrupted,omitempty"`
}

// IndexCell is one cell of a sweep.
type IndexCell struct {
	Name   string  `json:"name"`
	Params []Param `json:"params,omitempty"`
	// File is the cell's result, relative to the index.
	File        string   `json:"file"`
	RunIDs      []string `json:"run_ids"`
	OfferedRate float64  `json:"offered_rate"`
	ProduceRate float64  `json:"produce_rate"`
	// ProduceBytesRate is the acknowledged payload bytes per second.
	ProduceBytesRate float64 `json:"produce_bytes_rate"`
	ProduceP99       int64   `json:"produce_p99_ns"`
	E2EP99           int64   `json:"e2e_p99_ns"`
	// ProduceP99Spread and E2EP99Spread are the range (max - min) of the p99 across the cell's
	// repetitions (repeat:), 0 without repetitions.
	ProduceP99Spread int64 `json:"produce_p99_spread_ns,omitempty"`
	E2EP99Spread     int64 `json:"e2e_p99_spread_ns,omitempty"`
	// Queued counts acknowledged messages the engine still held at the end (a backlog, not a
	// loss); Lost those gone.
	Queued     int64 `json:"queued"`
	Lost       int64 `json:"lost"`
	Duplicates int64 `json:"duplicates"`
	// LostPerRun is each repetition's Lost, in order (repeat: above 1 only): what a failure costs
	// varies from run to run, and the table shows the range beside the sum.
	LostPerRun []int64 `json:"lost_per_run,omitempty"`
	// ProduceErrors counts failed sends; WriteUnavailableNs sums, over the faults on the engine
	// (not a consumer's, nor a command's, nor a fork failure that refused no write), the time from the fault's start to the first write acknowledged after
	// it ended: its window plus write back after. Writes in it failed (Redis) or waited (Kafka's
	// writer retries), on the shard or partition hit and, while a cluster is down, on all.
	ProduceErrors      int64 `json:"produce_errors,omitempty"`
	WriteUnavailableNs int64 `json:"write_unavailable_ns,omitempty"`
	Faults             bool  `json:"faults,omitempty"`
	// Trust is the cell's verdict (Assess of its result), stored so that a table or a report of
	// the index shows it without reading every cell.
	Trust Trust `json:"trust"`
	// Unsent counts scheduled messages never sent; Failed acknowledged-as-failed sends (the
	// ledger's failed).
	Unsent int64 `json:"unsent"`
	Failed int64 `json:"failed"`
	// Knee is the cell's knee (scenario knee:), KneeRate its offered rate (KneeRate: the highest
	// offered second when the objective held throughout); absent without a knee objective.
	Knee     *Knee   `json:"knee,omitempty"`
	KneeRate float64 `json:"knee_rate,omitempty"`
	// Pass and Reasons are the objective's verdict in a rate search.
	Pass    *bool    `json:"pass,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
}

// Param is one swept field's value in a cell.
type Param struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// SearchOutcome is what a rate search found.
type SearchOutcome struct {
	Objective []string `json:"objective"`
	// Best is the highest rate that met the objective (0: not even the lowest did).
	Best float64 `json:"best_rate"`
	// FailedAt is the lowest rate seen to fail (0: none failed up to the search's ceiling).
	FailedAt float64 `json:"failed_at,omitempty"`
}

// NewIndexCell summarises a cell's result for the index.
func NewIndexCell(name string, params []Param, file string, r *Result) IndexCell {
	c := IndexCell{Name: name, Params: params, File: file, OfferedRate: r.Summary.OfferedRate, ProduceRate: r.Summary.ProduceRate,
		ProduceBytesRate: r.Summary.ProduceBytesRate, ProduceP99: r.Summary.Latency["produce"].P99, E2EP99: r.Summary.Latency["e2e"].P99,
		Queued: r.Summary.Ledger.Queued, Lost: r.Summary.Ledger.Lost, Duplicates: r.Summary.Ledger.Duplicates,
		ProduceErrors: r.Summary.ProduceErrors, Faults: len(r.Faults) > 0,
		Trust: Assess(r), Unsent: r.Summary.Unsent, Failed: r.Summary.Ledger.Failed, Knee: r.Summary.Knee, KneeRate: KneeRate(r)}
	for _, f := range r.Faults {
		// A command's window is its background work (a rewrite, a snapshot), during which
		// writes go on: slow ones show in the latency, not here.
		// A fork failure takes nothing down: writes stop only where the server refuses them
		// (stop-writes-on-bgsave-error yes), and then they fail, as produce errors.
		if f.Kind == "fork-failure" && f.ProduceErrors == 0 {
			continue
		}
		if !strings.HasPrefix(f.Target, "consumer ") && f.Kind != "command" && f.RecoverWriteNs >= 0 {
			c.WriteUnavailableNs += f.EndNs - f.StartNs + max(0, f.RecoverWriteNs)
		}
	}
	if len(r.Repetitions) > 1 {
		for _, rep := range r.Repetitions {
			c.LostPerRun = append(c.LostPerRun, rep.Summary.Ledger.Lost)
		}
	}
	if m, err := LookupMetric("produce.p99"); err == nil {
		c.ProduceP99Spread = int64(Spread(r, m))
	}
	if m, err := LookupMetric("e2e.p99"); err == nil {
		c.E2EP99Spread = int64(Spread(r, m))
	}
	if r.Merged != nil {
		c.RunIDs = r.Merged.Sources
	} else {
		c.RunIDs = []string{r.RunID}
	}
	return c
}

// WriteIndexFile writes an index as indented JSON.
func WriteIndexFile(path string, ix *Index) error {
	ix.SchemaVersion = SchemaVersion
	b, err := json.MarshalIndent(ix, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadIndexFile reads an index.
func ReadIndexFile(path string) (*Index, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ix Index
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, fmt.Errorf("%s: not a qbench index: %w", path, err)
	}
	return &ix, nil
}

// WriteIndexTable prints one line per cell: its trust verdict beside its figures, then a legend
// of the flag codes used. Columns that would be empty are left out to keep the table narrow:
// achieved/offered (no cell had an offered rate), unsent and failed (all zero), the knee (no
// cell had a knee objective), bytes/s (every cell's messages are of one size, said below).
func WriteIndexTable(w io.Writer, ix *Index) error {
	var faults, offered, unsent, knee bool
	size, oneSize := -1.0, true
	for _, c := range ix.Cells {
		faults = faults || c.Faults // a sweep of fault scenarios (the explorers) also shows what writes cost
		offered = offered || c.OfferedRate > 0
		unsent = unsent || c.Unsent > 0 || c.Failed > 0
		knee = knee || c.Knee != nil
		if c.ProduceRate > 0 {
			per := c.ProduceBytesRate / c.ProduceRate
			if size >= 0 && math.Abs(per-size) > 0.5 {
				oneSize = false
			}
			size = per
		}
	}
	bytesCol := !oneSize || size < 0
	keys := paramColumns(ix.Cells)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "cell"
	if keys != nil {
		head = strings.Join(keys, "\t")
	}
	head += "\ttrust\toffered\tproduced"
	if offered {
		head += "\tach"
	}
	if bytesCol {
		head += "\tbytes/s"
	}
	head += "\tprod p99\te2e p99\tlost\tqueued\tdup"
	if unsent {
		head += "\tunsent\tfailed"
	}
	if knee {
		head += "\tknee"
	}
	if faults {
		head += "\tproduce errors\twrite unavailable"
	}
	if ix.Search != nil {
		head += "\tobjective"
	}
	fmt.Fprintln(tw, head)
	var trusts []Trust
	for _, c := range ix.Cells {
		trusts = append(trusts, c.Trust)
		off := "max"
		if c.OfferedRate > 0 {
			off = fmt.Sprintf("%.0f/s", c.OfferedRate)
		}
		name := c.Name
		if keys != nil {
			vals := make([]string, len(c.Params))
			for i, p := range c.Params {
				vals[i] = p.Value
			}
			name = strings.Join(vals, "\t")
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%.0f/s", name, trustLabel(c.Trust), off, c.ProduceRate)
		if offered {
			line += "\t" + achieved(c.ProduceRate, c.OfferedRate)
		}
		if bytesCol {
			line += fmt.Sprintf("\t%s/s", formatBytes(c.ProduceBytesRate))
		}
		line += fmt.Sprintf("\t%s\t%s\t%s\t%d\t%d", FormatNs(c.ProduceP99), FormatNs(c.E2EP99), lostText(c), c.Queued, c.Duplicates)
		if unsent {
			line += fmt.Sprintf("\t%d\t%d", c.Unsent, c.Failed)
		}
		if knee {
			line += "\t" + kneeText(c)
		}
		if faults {
			line += fmt.Sprintf("\t%d\t%s", c.ProduceErrors, FormatNs(c.WriteUnavailableNs))
		}
		if c.Pass != nil {
			v := "met"
			if !*c.Pass {
				v = "missed: " + strings.Join(c.Reasons, "; ")
			}
			line += "\t" + v
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !bytesCol {
		fmt.Fprintf(w, "every cell's messages average %s: bytes/s is produced x %s\n", formatBytes(size), formatBytes(size))
	}
	if offered {
		fmt.Fprintln(w, "ach: produced / offered")
	}
	if knee {
		fmt.Fprintln(w, "knee: offered rate of the first second that broke the knee objective (>= when none did)")
	}
	WriteTrustLegend(w, trusts)
	if s := ix.Search; s != nil {
		switch {
		case s.Best == 0:
			fmt.Fprintf(w, "no rate met the objective (%s); the lowest tried failed\n", strings.Join(s.Objective, ", "))
		case s.FailedAt == 0:
			fmt.Fprintf(w, "highest sustainable rate: at least %.0f msg/s (the search's ceiling; nothing failed)\n", s.Best)
		default:
			fmt.Fprintf(w, "highest sustainable rate: %.0f msg/s (met at %.0f, missed at %.0f)\n", s.Best, s.Best, s.FailedAt)
		}
	}
	return nil
}

// lostText is the cell's lost count, with the range a run lost when it was repeated:
// "1530 (490-530 a run)".
func lostText(c IndexCell) string {
	if len(c.LostPerRun) < 2 {
		return fmt.Sprint(c.Lost)
	}
	lo, hi := slices.Min(c.LostPerRun), slices.Max(c.LostPerRun)
	if lo == hi {
		return fmt.Sprintf("%d (%d a run)", c.Lost, lo)
	}
	return fmt.Sprintf("%d (%d-%d a run)", c.Lost, lo, hi)
}

// paramColumns are the swept keys when every cell has the same ones in the same order: the table
// then shows one narrow column per key ("design", "policy") instead of "design=list,policy=none".
func paramColumns(cells []IndexCell) []string {
	if len(cells) == 0 || len(cells[0].Params) == 0 {
		return nil
	}
	var keys []string
	for _, p := range cells[0].Params {
		keys = append(keys, p.Key)
	}
	for _, c := range cells {
		if len(c.Params) != len(keys) {
			return nil
		}
		for i, p := range c.Params {
			if p.Key != keys[i] {
				return nil
			}
		}
	}
	return keys
}

// trustLabel is a cell's verdict for a table; "?" for a cell of an index written before verdicts.
func trustLabel(t Trust) string {
	if t.Verdict == "" {
		return "?"
	}
	return t.Label()
}

// achieved is produced over offered as a percentage ("-" for a closed loop).
func achieved(produced, offered float64) string {
	if offered <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*produced/offered)
}

// kneeText is a cell's knee rate: "4571/s" where the objective broke, ">=5000/s" where it held.
func kneeText(c IndexCell) string {
	switch {
	case c.Knee == nil:
		return "-"
	case c.Knee.Reached:
		return fmt.Sprintf("%.0f/s", c.KneeRate)
	}
	return fmt.Sprintf(">=%.0f/s", c.KneeRate)
}

var slugRe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Slug turns a cell name ("design=list,rate=2000") into a file name ("design-list_rate-2000").
func Slug(name string) string {
	name = strings.NewReplacer("=", "-", ",", "_", "/", "_").Replace(name)
	name = slugRe.ReplaceAllString(name, "-")
	if name == "" {
		return "run"
	}
	return name
}

// LagGrowing tells whether the backlog was still growing when the producers stopped: over the
// measured seconds of the producing window, the load generator's lag at the end is more than a
// quarter-second of offered load and more than twice the lag half-way through. A queue that keeps
// up has a lag that stays flat, however high its latency.
func LagGrowing(r *Result, duration time.Duration) bool {
	var lags []int64
	for _, iv := range r.Series {
		if iv.Warmup || (duration > 0 && iv.StartNs+int64(time.Second) > int64(duration)) {
			continue
		}
		lags = append(lags, iv.Lag)
	}
	if len(lags) < 2 {
		return false
	}
	end, mid := lags[len(lags)-1], lags[(len(lags)-1)/2]
	floor := r.Summary.OfferedRate / 4
	if floor < 10 {
		floor = 10
	}
	return float64(end) > floor && end > 2*mid
}

// Objective is what a rate search holds each rate to: absolute gates, no growing lag, and the
// offered rate actually achieved.
type Objective struct {
	Gates []Gate
	// Duration is the producing window, to tell drain seconds from load seconds.
	Duration time.Duration
	// MinAchieved is the fraction of the offered rate that must be acknowledged (0.95 default).
	MinAchieved float64
	// AllowLagGrowth turns off the lag check.
	AllowLagGrowth bool
}

// Check holds a result to the objective and says why it missed.
func (o Objective) Check(r *Result) (bool, []string) {
	var reasons []string
	for _, g := range CheckGates(o.Gates, nil, r, GateOptions{}) {
		if !g.Pass {
			reasons = append(reasons, g.Describe())
		}
	}
	if !o.AllowLagGrowth && LagGrowing(r, o.Duration) {
		reasons = append(reasons, "lag growing")
	}
	minAch := o.MinAchieved
	if minAch == 0 {
		minAch = 0.95
	}
	if off := r.Summary.OfferedRate; off > 0 && r.Summary.ProduceRate < minAch*off {
		reasons = append(reasons, fmt.Sprintf("achieved %.0f of %.0f msg/s", r.Summary.ProduceRate, off))
	}
	if r.Interrupted {
		reasons = append(reasons, "interrupted")
	}
	return len(reasons) == 0, reasons
}
