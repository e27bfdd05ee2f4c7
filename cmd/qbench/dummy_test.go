package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A qbench built with the test-only engine's one wiring line (dummy_wiring.go, -tags
// qbench_dummy) lists it in `qbench engines` and validates a scenario naming it; the qbench
// built without that line knows neither. Nothing else in the tree names the engine.
func TestDummyEngineByRegistrationAlone(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "qbench")
	if out, err := exec.Command("go", "build", "-tags", "qbench_dummy", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags qbench_dummy: %v\n%s", err, out)
	}
	scenario := writeFile(t, "d.yaml", "engine: dummy\nrate: 100\nduration: 1s\n")
	for _, tc := range []struct {
		name     string
		bin      string
		wired    bool
		wantCode int
	}{
		{"wired", bin, true, 0},
		{"not wired", qbenchBin, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, code := run(t, tc.bin, "engines")
			if code != 0 || strings.Contains("\n"+out, "\ndummy ") != tc.wired || strings.Contains(out, "designs:  queue") != tc.wired {
				t.Fatalf("qbench engines (exit %d) lists dummy: %v, want %v:\n%s", code, !tc.wired, tc.wired, out)
			}
			_, stderr, code := run(t, tc.bin, "validate", scenario)
			if code != tc.wantCode {
				t.Fatalf("validate exit %d, want %d: %s", code, tc.wantCode, stderr)
			}
			if !tc.wired && !strings.Contains(stderr, `unknown engine "dummy"`) {
				t.Fatalf("validate without the engine: %s", stderr)
			}
		})
	}
}

// run runs a qbench binary and returns stdout, stderr and the exit code.
func run(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	saved := qbenchBin
	qbenchBin = bin
	defer func() { qbenchBin = saved }()
	return qbench(t, args...)
}
