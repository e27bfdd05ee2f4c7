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

// HdrHistogram's own HistogramLogProcessor (Java) reads the .hlog and finds, by default (the
// untagged intervals), exactly the summary's values with the same maximum, one interval a second;
// with -tag warmup it finds the warm-up's.
func TestHlogReadByJavaHistogramLogProcessor(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java is not installed")
	}
	jar := hdrJar(t)
	r := resultstest.Make(resultstest.Options{Seconds: 5, Warmup: 1, StallAt: 2 * time.Second, StallFor: 300 * time.Millisecond})
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
	total, err := r.Histogram("produce")
	if err != nil {
		t.Fatal(err)
	}
	if total.TotalCount() != r.Summary.Latency["produce"].Count {
		t.Fatalf("fixture: histogram %d, summary %d", total.TotalCount(), r.Summary.Latency["produce"].Count)
	}
	want := fmt.Sprintf("#[Max     = %12.3f, Total count    = %12d]", float64(total.Max())/1e6, total.TotalCount())
	if !strings.Contains(string(hgrm), want) {
		t.Fatalf("Java's distribution lacks %q:\n%s", want, hgrm)
	}
	intervals, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(intervals), " I:"); n != len(r.Series) {
		t.Fatalf("Java read %d intervals, want %d", n, len(r.Series))
	}
	warmOut := filepath.Join(dir, "warm")
	cmd = exec.Command("java", "-cp", jar, "org.HdrHistogram.HistogramLogProcessor", "-i", in, "-o", warmOut, "-tag", results.WarmupTag, "-outputValueUnitRatio", "1000000")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("HistogramLogProcessor -tag: %v\n%s", err, msg)
	}
	warm, err := os.ReadFile(warmOut + ".hgrm")
	if err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprintf("Total count    = %12d]", r.Series[0].Acked); !strings.Contains(string(warm), w) {
		t.Fatalf("Java's warm-up distribution lacks %q:\n%s", w, warm)
	}
}
