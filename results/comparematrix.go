package results

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

// MatrixComparison compares two sweeps (index.json files) cell by cell: each cell of the current
// sweep with the baseline's cell of the same parameters, one verdict per cell and one overall.
type MatrixComparison struct {
	Baseline string           `json:"baseline"`
	Current  string           `json:"current"`
	Cells    []CellComparison `json:"cells"`
	// Verdict is regression when any cell regressed, else inconclusive when any cell was (or a
	// cell is missing from one side), else pass.
	Verdict string   `json:"verdict"`
	Pass    bool     `json:"pass"`
	Notes   []string `json:"notes,omitempty"`
}

// CellComparison is one cell's comparison, or why the cell could not be compared.
type CellComparison struct {
	Name    string  `json:"name"`
	Params  []Param `json:"params,omitempty"`
	Verdict string  `json:"verdict"`
	// Missing says why there is no comparison (the cell is in one sweep only).
	Missing    string      `json:"missing,omitempty"`
	Comparison *Comparison `json:"comparison,omitempty"`
}

// MatrixInputs supply what CompareMatrix needs per cell: the gates to hold the current cell to,
// and the gate options given its baseline.
type MatrixInputs struct {
	Gates   func(current *Result) ([]Gate, error)
	Options func(baseline *Result) GateOptions
}

// cellKey matches cells across sweeps: their parameters in key order, else their name.
func cellKey(c IndexCell) string {
	if len(c.Params) == 0 {
		return c.Name
	}
	ps := make([]string, len(c.Params))
	for i, p := range c.Params {
		ps[i] = p.Key + "=" + p.Value
	}
	sort.Strings(ps)
	return strings.Join(ps, ",")
}

// CompareMatrix compares two sweeps' cells; baseFile and curFile are the index files (cells'
// results are read relative to them).
func CompareMatrix(base, cur *Index, baseFile, curFile string, in MatrixInputs) (*MatrixComparison, error) {
	mc := &MatrixComparison{Baseline: baseFile, Current: curFile}
	if base.Interrupted {
		mc.Notes = append(mc.Notes, "the baseline sweep was interrupted")
	}
	if cur.Interrupted {
		mc.Notes = append(mc.Notes, "the current sweep was interrupted")
	}
	baseCells := map[string]IndexCell{}
	for _, c := range base.Cells {
		baseCells[cellKey(c)] = c
	}
	seen := map[string]bool{}
	for _, cc := range cur.Cells {
		key := cellKey(cc)
		seen[key] = true
		out := CellComparison{Name: cc.Name, Params: cc.Params}
		bc, ok := baseCells[key]
		if !ok {
			out.Verdict, out.Missing = VerdictInconclusive, "not in the baseline sweep"
			mc.Cells = append(mc.Cells, out)
			continue
		}
		bp, cp := filepath.Join(filepath.Dir(baseFile), bc.File), filepath.Join(filepath.Dir(curFile), cc.File)
		br, err := ReadFile(bp)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", cc.Name, err)
		}
		cr, err := ReadFile(cp)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", cc.Name, err)
		}
		gates, err := in.Gates(cr)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", cc.Name, err)
		}
		out.Comparison = Compare(br, cr, bp, cp, gates, in.Options(br))
		out.Verdict = out.Comparison.Verdict
		mc.Cells = append(mc.Cells, out)
	}
	for _, bc := range base.Cells {
		if !seen[cellKey(bc)] {
			mc.Cells = append(mc.Cells, CellComparison{Name: bc.Name, Params: bc.Params, Verdict: VerdictInconclusive, Missing: "not in the current sweep"})
		}
	}
	mc.Verdict = VerdictPass
	for _, c := range mc.Cells {
		switch {
		case c.Verdict == VerdictRegression:
			mc.Verdict = VerdictRegression
		case c.Verdict == VerdictInconclusive && mc.Verdict == VerdictPass:
			mc.Verdict = VerdictInconclusive
		}
	}
	mc.Pass = mc.Verdict == VerdictPass
	return mc, nil
}

// Gates lists every cell's gate results, for naming the failing ones.
func (mc *MatrixComparison) Gates() (failed, inconclusive []string) {
	for _, c := range mc.Cells {
		if c.Comparison == nil {
			continue
		}
		for _, g := range FailedGates(c.Comparison.Gates) {
			failed = append(failed, c.Name+": "+g.Describe())
		}
		for _, g := range InconclusiveGates(c.Comparison.Gates) {
			inconclusive = append(inconclusive, c.Name+": "+g.Describe())
		}
	}
	return failed, inconclusive
}

func (c CellComparison) trustLabels() (base, cur, gates string) {
	if c.Comparison == nil {
		return "-", "-", c.Missing
	}
	cmp := c.Comparison
	base = "-"
	if cmp.Baseline != nil {
		base = cmp.Baseline.Trust.Label()
	}
	f, i := len(FailedGates(cmp.Gates)), len(InconclusiveGates(cmp.Gates))
	gates = fmt.Sprintf("%d failed, %d inconclusive of %d", f, i, len(cmp.Gates))
	return base, cmp.Current.Trust.Label(), gates
}

// overallText is the matrix's verdict in words.
func (mc *MatrixComparison) overallText() string {
	n := map[string]int{}
	for _, c := range mc.Cells {
		n[c.Verdict]++
	}
	return fmt.Sprintf("%s: %d of %d cells regressed, %d inconclusive, %d pass", mc.Verdict, n[VerdictRegression], len(mc.Cells), n[VerdictInconclusive], n[VerdictPass])
}

// WriteText prints one line per cell (both sides' trust labels, its verdict), the legend of the flag
// codes, then each cell's gates that did not pass, and the overall verdict.
func (mc *MatrixComparison) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "baseline %s\ncurrent  %s\n\n", mc.Baseline, mc.Current)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cells := make([]IndexCell, len(mc.Cells))
	for i, c := range mc.Cells {
		cells[i] = IndexCell{Name: c.Name, Params: c.Params}
	}
	keys := paramColumns(cells) // one column per swept key, as in the sweep table
	head := "cell"
	if keys != nil {
		head = strings.Join(keys, "\t")
	}
	fmt.Fprintln(tw, head+"\tbaseline\tcurrent\tverdict\tgates")
	var trusts []Trust
	for _, c := range mc.Cells {
		b, cu, g := c.trustLabels()
		name := c.Name
		if keys != nil {
			vals := make([]string, len(c.Params))
			for i, p := range c.Params {
				vals[i] = p.Value
			}
			name = strings.Join(vals, "\t")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, b, cu, c.Verdict, g)
		if c.Comparison != nil {
			if c.Comparison.Baseline != nil {
				trusts = append(trusts, c.Comparison.Baseline.Trust)
			}
			trusts = append(trusts, c.Comparison.Current.Trust)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	WriteTrustLegend(w, trusts)
	for _, n := range mc.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, c := range mc.Cells {
		if c.Comparison == nil || len(c.Comparison.Gates) == 0 {
			continue
		}
		fmt.Fprintf(w, "\ncell %s:\n", c.Name)
		if err := c.Comparison.WriteGates(w); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", mc.overallText())
	return err
}

// WriteJSON writes the matrix comparison as indented JSON.
func (mc *MatrixComparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(mc)
}

// WriteMarkdown writes the verdict, a table of cells, and each cell's gates (folded).
func (mc *MatrixComparison) WriteMarkdown(w io.Writer) error {
	mark := map[string]string{VerdictPass: "✅", VerdictRegression: "❌", VerdictInconclusive: "⚠️"}
	fmt.Fprintf(w, "### qbench matrix: %s %s\n\n", mark[mc.Verdict], mc.overallText())
	fmt.Fprintf(w, "Baseline `%s`, current `%s`.\n\n", mdCode(mc.Baseline), mdCode(mc.Current))
	for _, n := range mc.Notes {
		fmt.Fprintf(w, "> **Note:** %s\n\n", n)
	}
	fmt.Fprintln(w, "| | cell | baseline trust | current trust | gates |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, c := range mc.Cells {
		b, cu, g := c.trustLabels()
		fmt.Fprintf(w, "| %s %s | `%s` | %s | %s | %s |\n", mark[c.Verdict], c.Verdict, mdCode(c.Name), b, cu, g)
	}
	fmt.Fprintln(w)
	for _, c := range mc.Cells {
		if c.Comparison == nil {
			continue
		}
		fmt.Fprintf(w, "<details><summary>%s %s</summary>\n\n", mark[c.Verdict], c.Name)
		if err := c.Comparison.WriteMarkdown(w); err != nil {
			return err
		}
		fmt.Fprintln(w, "\n</details>")
		fmt.Fprintln(w)
	}
	return nil
}

// WriteJUnit writes one test suite per cell, one test case per gate.
func (mc *MatrixComparison) WriteJUnit(w io.Writer) error {
	var suites []junitSuite
	for _, c := range mc.Cells {
		if c.Comparison == nil {
			suites = append(suites, junitSuite{Name: "qbench gates [" + c.Name + "]", Tests: 1, Skipped: 1,
				Cases: []junitCase{{Class: "qbench.gates." + c.Name, Name: "cell", Skipped: &junitSkipped{Message: "inconclusive: " + c.Missing}}}})
			continue
		}
		suites = append(suites, c.Comparison.junitSuite(c.Name))
	}
	return writeJUnit(w, suites)
}

// IsIndexFile tells a sweep's index.json from a result file by its top-level fields (an index
// has cells and a kind; a result has a summary).
func IsIndexFile(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return false, nil // ReadFile names the problem
	}
	_, cells := top["cells"]
	_, kind := top["kind"]
	_, summary := top["summary"]
	return cells && kind && !summary, nil
}
