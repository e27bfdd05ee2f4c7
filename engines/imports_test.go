package engines_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The allowed import directions of ARCHITECTURE.md, enforced. Each rule: packages matching
// "from" (a prefix) must not import packages matching any of "banned" (prefixes).
var importRules = []struct {
	from   string
	banned []string
}{
	{"qbench/engines", []string{"qbench/bench", "qbench/scenarios", "qbench/results", "qbench/plots", "qbench/cmd"}},
	{"qbench/bench", []string{"qbench/engines/", "qbench/plots", "qbench/cmd"}}, // the seam only, never a concrete engine
	{"qbench/scenarios", []string{"qbench/engines", "qbench/bench", "qbench/results", "qbench/plots"}},
	{"qbench/results", []string{"qbench/engines", "qbench/bench", "qbench/scenarios", "qbench/plots"}},
	{"qbench/plots", []string{"qbench/engines", "qbench/bench", "qbench/scenarios"}},
	{"qbench/engines/server", []string{"qbench/engines/redisq", "qbench/engines/kafkaq"}},
	// The log knows files, not the keyspace or the protocol; the file-system seam knows nothing.
	{"qbench/engines/server/aof", []string{"qbench/engines/server/store", "qbench/engines/server/resp"}},
	{"qbench/engines/server/fsys", []string{"qbench/"}},
	// The test-only engine is linked by tests (and -tags qbench_dummy), never by a shipped package.
	{"qbench", []string{"qbench/engines/enginetest"}},
}

func TestImportDirections(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		for _, rule := range importRules {
			if pkg != rule.from && !strings.HasPrefix(pkg, rule.from+"/") {
				continue
			}
			checked++
			for _, imp := range imports {
				for _, b := range rule.banned {
					if strings.HasPrefix(imp, b) {
						t.Errorf("%s imports %s, which ARCHITECTURE.md forbids", pkg, imp)
					}
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d packages checked; is go list working?", checked)
	}
}

// Build output (test binaries, profiles) must never be committed: a tracked file over 1 MB
// outside a testdata/ folder fails this test.
func TestNoLargeTrackedFiles(t *testing.T) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	const limit = 1 << 20
	for _, path := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if path == "" || strings.Contains("/"+path, "/testdata/") {
			continue
		}
		fi, err := os.Stat(filepath.Join("..", path))
		if err != nil {
			continue // deleted in the work tree
		}
		if fi.Size() > limit {
			t.Errorf("%s is %d bytes: build output or data over 1 MB belongs in .gitignore or testdata/", path, fi.Size())
		}
	}
}
