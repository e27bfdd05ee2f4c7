package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The GitHub Actions job in results/README.md is run here: its qbench commands, as written, in a
// directory laid out like the repository.
func TestCIExample(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed")
		}
		t.Skip("redis-server is not installed")
	}
	readme, err := os.ReadFile("../../results/README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	begin, end := strings.Index(s, "<!-- ci-example:begin -->"), strings.Index(s, "<!-- ci-example:end -->")
	if begin < 0 || end < begin {
		t.Fatal("results/README.md lacks the ci-example markers")
	}
	var cmds []string
	for _, line := range strings.Split(s[begin:end], "\n") {
		line = strings.TrimSpace(line)
		if c, ok := strings.CutPrefix(line, "- run: ./qbench "); ok {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) != 2 {
		t.Fatalf("found %d qbench commands in the example, want 2: %q", len(cmds), cmds)
	}
	dir := t.TempDir()
	for _, f := range []string{"scenarios/library/start/ci-smoke.yaml", "results/baselines/ci-smoke.json"} {
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		cmd := exec.Command("sh", "-c", `"$QBENCH" `+c)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "QBENCH="+qbenchBin)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		// The run may fail a gate on a loaded machine (exit 3, which the example's
		// "|| test $? -eq 5" turns into 1; it must say which gate); an inconclusive verdict
		// (exit 5) passes the step. It must not fail in any other way. The report always
		// succeeds.
		switch {
		case code == 0:
		case (code == 3 || code == 1) && i == 0 && strings.Contains(string(out), "gate failed: "):
			t.Logf("a gate failed on this machine:\n%s", out)
		default:
			t.Fatalf("qbench %s: exit %d\n%s", c, code, out)
		}
	}
	for _, f := range []string{"current.json", "gates.xml", "gates.md", "report.html"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}
