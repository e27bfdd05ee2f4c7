package plots_test

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"qbench/plots"
	"qbench/results"
)

var update = flag.Bool("update", false, "rewrite testdata/ (the report screenshot of the documentation)")

func writeReport(t *testing.T) (string, []byte) {
	t.Helper()
	runs := fixtureRuns()
	gates, err := results.ParseGates([]string{"lost == 0", "produce.p99 <= +10%", "e2e.p99 <= 2s"}, "flag")
	if err != nil {
		t.Fatal(err)
	}
	cmp := results.Compare(runs[1].Result, runs[0].Result, "list.json", "stream.json", gates, results.GateOptions{})
	var b bytes.Buffer
	if err := plots.WriteReport(&b, runs, plots.ReportOptions{Title: "qbench report test", Comparison: cmp, Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b.Bytes()
}

func TestReportIsSelfContained(t *testing.T) {
	_, html := writeReport(t)
	s := string(html)
	for _, want := range []string{"<h1 id=\"title\">qbench report test</h1>", "id=\"gates\"", "2 of 3 failed", "FAIL", "lost == 0",
		"id=\"summary\"", "produce latency", "id=\"charts\"", "id=\"timeline\"", "stall", "id=\"environment\"", "appendfsync", "everysec"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// 10 charts, the two by intended send time (the runs have faults), and the timeline of the
	// run with faults (the other says "No faults injected." in words).
	if n := strings.Count(s, "<svg"); n != 13 {
		t.Errorf("%d svg elements, want 13", n)
	}
	// Nothing is fetched: no scripts, stylesheets, images or fonts from outside.
	for _, bad := range []string{"<script", "<link", "<img", "src=", "@import", "url("} {
		if strings.Contains(s, bad) {
			t.Errorf("report contains %q", bad)
		}
	}
	for _, u := range regexp.MustCompile(`https?://[^"' )]+`).FindAllString(s, -1) {
		if !strings.HasPrefix(u, "http://www.w3.org/") {
			t.Errorf("report refers to %s", u)
		}
	}
}

// chromium finds Debian's chromium; without it the render test is skipped, except in CI.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; CI must install Debian's chromium package")
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

func headless(t *testing.T, bin string, args ...string) (stdout []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--hide-scrollbars", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Dir = t.TempDir()
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

// The report renders in headless Chromium: the DOM it builds has every section and chart, and
// the screenshot shows the charts' colours.
func TestReportRendersInChromium(t *testing.T) {
	bin := chromium(t)
	path, _ := writeReport(t)
	url := "file://" + path

	dom := string(headless(t, bin, "--dump-dom", url))
	for _, want := range []string{"qbench report test", "2 of 3 failed", "Summary", "Charts", "Fault timeline", "Scenario and environment"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if n := strings.Count(dom, "<svg"); n != 13 {
		t.Errorf("rendered DOM has %d svg elements, want 13", n)
	}

	shot := filepath.Join(t.TempDir(), "report.png")
	headless(t, bin, "--window-size=1280,2400", "--screenshot="+shot, url)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if sz := img.Bounds().Size(); sz.X != 1280 || sz.Y != 2400 {
		t.Fatalf("screenshot is %v", sz)
	}
	// The first charts are in the first 2400 pixels: both runs' line colours are on screen.
	for i := 0; i < 2; i++ {
		if n := countColour(img, plots.Colour(i)); n < 200 {
			t.Errorf("run %d's colour covers %d pixels of the screenshot; the charts did not render", i, n)
		}
	}
	if *update {
		if err := os.WriteFile(filepath.Join("testdata", "report-screenshot.png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
