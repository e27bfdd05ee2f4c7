package results_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"qbench/results"
	"qbench/results/resultstest"
)

// hdrJar finds HdrHistogram's Java library: $QBENCH_HDR_JAR, or Maven's local repository.
func hdrJar(t *testing.T) string {
	if p := os.Getenv("QBENCH_HDR_JAR"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	matches, _ := filepath.Glob(filepath.Join(home, ".m2/repository/org/hdrhistogram/HdrHistogram/*/HdrHistogram-*.jar"))
	if len(matches) == 0 {
		t.Skip("HdrHistogram's Java library is not here (set QBENCH_HDR_JAR)")
	}
	return matches[len(matches)-1]
}

// HdrHistogram's own HistogramLogProcessor (Java) reads the .hlog and finds every value, with
// the same maximum, in the same number of intervals.
func TestHlogReadByJavaHistogramLogProcessor(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java is not installed")
	}
	jar := hdrJar(t)
	r := resultstest.Make(resultstest.Options{Seconds: 5, StallAt: 2 * time.Second, StallFor: 300 * time.Millisecond})
	dir := t.TempDir()
	var b bytes.Buffer
	if err := results.WriteHlog(&b, r, "produce"); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "produce.hlog")
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "java")
	cmd := exec.Command("java", "-cp", jar, "org.HdrHistogram.HistogramLogProcessor", "-i", in, "-o", out, "-outputValueUnitRatio", "1000000")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("HistogramLogProcessor: %v\n%s", err, msg)
	}
	hgrm, err := os.ReadFile(out + ".hgrm")
	if err != nil {
		t.Fatal(err)
	}
	hs, err := results.IntervalHistograms(r, "produce")
	if err != nil {
		t.Fatal(err)
	}
	total := results.NewHistogram()
	for _, h := range hs {
		total.Merge(h)
	}
	want := fmt.Sprintf("#[Max     = %12.3f, Total count    = %12d]", float64(total.Max())/1e6, total.TotalCount())
	if !strings.Contains(string(hgrm), want) {
		t.Fatalf("Java's distribution lacks %q:\n%s", want, hgrm)
	}
	intervals, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(intervals), " I:"); n != len(hs) {
		t.Fatalf("Java read %d intervals, want %d", n, len(hs))
	}
}
