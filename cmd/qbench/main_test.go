package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var qbenchBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "qbench-bin-")
	if err != nil {
		panic(err)
	}
	qbenchBin = filepath.Join(dir, "qbench")
	if out, err := exec.Command("go", "build", "-o", qbenchBin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// qbench runs the binary and returns stdout, stderr and the exit code.
func qbench(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(qbenchBin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	bad := writeFile(t, "bad.yaml", "name: x\nrate: 10\nproducers: -2\n")
	unknownDesign := writeFile(t, "d.yaml", "name: x\nrate: 10\ndesign: carrier-pigeon\n")
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"validate a good file", []string{"validate", "../../scenarios/quickstart.yaml"}, 0, ""},
		{"validate a bad file", []string{"validate", bad}, 2, "bad.yaml:3: producers: must be at least 1"},
		{"unknown design", []string{"validate", unknownDesign}, 2, "d.yaml:3: design: engine embedded has no design \"carrier-pigeon\""},
		{"run a bad file", []string{"run", bad}, 2, "bad.yaml:3: producers"},
		{"missing file", []string{"run", "/nonexistent.yaml"}, 2, "no such file"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"unknown flag", []string{"run", "--frob", "x.yaml"}, 2, "unknown flag"},
		{"missing argument", []string{"run"}, 2, "accepts 1 arg"},
		{"engines lists the registry", []string{"engines"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := qbench(t, c.args...)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.wantCode, stderr)
			}
			if !strings.Contains(stderr, c.wantStderr) {
				t.Fatalf("stderr %q does not contain %q", stderr, c.wantStderr)
			}
		})
	}
}
