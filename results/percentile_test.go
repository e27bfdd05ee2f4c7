package results_test

import (
	"bufio"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"qbench/results"
)

// percentiles are the ones the golden files record, with 0 and 100 for the ends.
var percentiles = []float64{0, 25, 50, 90, 99, 99.9, 99.99, 99.999, 100}

// percentileCounts are chosen so that p% of the count has every kind of fraction: exact ranks,
// fractions below a half (where rounding to nearest and rounding up disagree), above a half.
var percentileCounts = []int{1, 2, 7, 100, 999, 5000, 5123, 10001, 12345, 40000, 65537, 99999}

// percentileHistogram is the n-value histogram of the golden set: log-normal latencies around
// 2 ms with a tail to about a second, seeded by n, so the set is the same on every machine.
func percentileHistogram(n int) string {
	rng := rand.New(rand.NewSource(int64(n)))
	h := results.NewHistogram()
	for i := 0; i < n; i++ {
		v := math.Exp(rng.NormFloat64()*1.5) * 2e6
		if err := h.RecordValue(int64(math.Min(v, 3e12))); err != nil {
			panic(err)
		}
	}
	s, err := results.EncodeHistogram(h)
	if err != nil {
		panic(err)
	}
	return s
}

// TestWritePercentileHistograms writes testdata/percentiles/histograms.txt under -update; Java's
// and Python's figures are then recorded from it with the two scripts beside it (see README).
func TestWritePercentileHistograms(t *testing.T) {
	var b strings.Builder
	for _, n := range percentileCounts {
		fmt.Fprintf(&b, "%d %s\n", n, percentileHistogram(n))
	}
	golden(t, "percentiles/histograms.txt", []byte(b.String()))
}

// readRecorded reads "count percentile value" lines written by Percentiles.java or percentiles.py.
func readRecorded(t *testing.T, name string) map[string]int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata/percentiles", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 {
			t.Fatalf("%s: bad line %q", name, sc.Text())
		}
		v, err := strconv.ParseInt(fs[2], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[fs[0]+" "+fs[1]] = v
	}
	if len(out) != len(percentileCounts)*len(percentiles) {
		t.Fatalf("%s has %d figures, want %d", name, len(out), len(percentileCounts)*len(percentiles))
	}
	return out
}

func key(n int, p float64) string {
	return fmt.Sprintf("%d %s", n, strconv.FormatFloat(p, 'f', -1, 64))
}

// Every percentile qbench reports is the figure HdrHistogram's Java library gives for the same
// histogram (AbstractHistogram.getValueAtPercentile, recorded in java.txt), and p99.99 is the
// figure the issue found wrong in 5 of 12 histograms.
func TestPercentilesMatchHdrHistogramJava(t *testing.T) {
	java := readRecorded(t, "java.txt")
	disagreeGo := 0
	for _, n := range percentileCounts {
		h, err := results.DecodeHistogram(percentileHistogram(n))
		if err != nil {
			t.Fatal(err)
		}
		got := results.ValuesAtPercentiles(h, percentiles)
		for i, p := range percentiles {
			if want := java[key(n, p)]; got[i] != want {
				t.Errorf("%d values, p%v: qbench %d, Java %d", n, p, got[i], want)
			}
			if one := results.ValueAtPercentile(h, p); one != got[i] {
				t.Errorf("%d values, p%v: ValueAtPercentile %d, ValuesAtPercentiles %d", n, p, one, got[i])
			}
			if h.ValueAtPercentile(p) != got[i] {
				disagreeGo++
			}
		}
		l := results.Summarise(h)
		if l.P9999 != java[key(n, 99.99)] || l.P50 != java[key(n, 50)] || l.P999 != java[key(n, 99.9)] {
			t.Errorf("%d values: Summarise %+v disagrees with Java", n, l)
		}
	}
	// The set must exercise the difference, or the test proves nothing.
	if disagreeGo == 0 {
		t.Fatal("hdrhistogram-go agrees with Java on every figure: the golden set does not test the rounding")
	}
}

// Python's hdrhistogram package rounds the rank to nearest in get_value_at_percentile
// (int(p * count / 100 + 0.5)), so it agrees with Java, and so with qbench, except where p% of
// the count has a fraction below one half; there Python is lower. hdrhistogram-go rounds to
// nearest too but computes p / 100 * count, which for 5,000 values at p99.99 gives 4999.4999...
// and so one rank lower even where Python agrees with Java (the 594.02 ms against
// 596.12 ms). The recorded figures show exactly that, so a change in either library shows here.
func TestPercentilesAgainstHdrHistogramPython(t *testing.T) {
	py := readRecorded(t, "python.txt")
	java := readRecorded(t, "java.txt")
	for _, n := range percentileCounts {
		for _, p := range percentiles {
			exact := p * float64(n) / 100
			frac := exact - math.Floor(exact)
			k := key(n, p)
			if frac == 0 || frac >= 0.5 || p == 0 {
				if py[k] != java[k] {
					t.Errorf("%s: Python %d, Java %d, and both round the same way here", k, py[k], java[k])
				}
			} else if py[k] > java[k] {
				t.Errorf("%s: Python %d above Java %d; Python rounds the rank down here", k, py[k], java[k])
			}
		}
	}
}

// With Java installed, the recorded figures are checked against Java itself, so java.txt cannot
// drift from what the library computes.
func TestPercentilesRecordedFromJava(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java is not installed")
	}
	jar := hdrJar(t)
	out, err := exec.Command("java", "-cp", jar, "testdata/percentiles/Percentiles.java", "testdata/percentiles/histograms.txt").CombinedOutput()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, out)
	}
	want, err := os.ReadFile("testdata/percentiles/java.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(want) {
		t.Fatalf("Java now says:\n%s\nrecorded:\n%s", out, want)
	}
}
