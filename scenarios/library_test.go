package scenarios

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shippedScenarioFiles is every scenario file the library's manifest lists (its scripts and data
// aside), as paths from this package's folder.
func shippedScenarioFiles(t testing.TB) []string {
	t.Helper()
	entries, err := ReadLibrary("library")
	if err != nil {
		t.Fatal(err)
	}
	files := LibraryFiles("library", entries, "run", "pair", "failure", "load")
	if len(files) < 20 {
		t.Fatalf("the manifest lists %d scenario files", len(files))
	}
	return files
}

// The manifest and the library agree: every file under library/ (and every scenario beside the
// parser, quickstart.yaml) has an entry, every entry a file, every scenario file a ci that runs
// or loads it, and the index (library/README.md) has every entry's row as the manifest says it.
func TestLibraryManifest(t *testing.T) {
	entries, err := ReadLibrary("library")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]LibraryEntry{}
	for _, e := range entries {
		listed[filepath.Join("library", e.Path)] = e
		if _, err := os.Stat(filepath.Join("library", e.Path)); err != nil {
			t.Errorf("manifest.yaml:%d: path: %s has no file: %v", e.Line, e.Path, err)
		}
		if strings.HasSuffix(e.Path, ".yaml") == (e.CI == "none") {
			t.Errorf("manifest.yaml:%d: ci: %s is %q: a scenario file runs or loads, anything else is none", e.Line, e.Path, e.CI)
		}
		if e.CI != "none" && len(e.Needs) == 0 {
			t.Errorf("manifest.yaml:%d: needs: %s names nothing", e.Line, e.Path)
		}
	}
	var shipped []string
	top, _ := filepath.Glob("*.yaml")
	shipped = append(shipped, top...)
	filepath.WalkDir("library", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "README.md" && path != filepath.Join("library", "manifest.yaml") {
			shipped = append(shipped, path)
		}
		return err
	})
	for _, f := range shipped {
		if _, ok := listed[filepath.Clean(f)]; !ok {
			t.Errorf("%s is not in library/manifest.yaml", f)
		}
	}
	if len(shipped) != len(entries) {
		t.Errorf("%d shipped files, %d manifest entries", len(shipped), len(entries))
	}
	index, err := os.ReadFile(filepath.Join("library", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Each entry's row: its link, then its purpose, needs and ci as the manifest has them.
	for _, e := range entries {
		needs := strings.Join(e.Needs, ", ")
		if needs == "" {
			needs = "-"
		}
		row := "](" + e.Path + ") | " + e.Purpose + " | " + needs + " | " + e.CI + " |"
		if !strings.Contains(string(index), row) {
			t.Errorf("library/README.md has no row ending %q (manifest.yaml:%d)", row, e.Line)
		}
	}
}

// ReadLibrary refuses a manifest entry it could not act on, naming its line and field.
func TestReadLibraryRefuses(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown ci", "entries:\n  - {path: a.yaml, purpose: x, needs: [redis], ci: sometimes}\n", `manifest.yaml:2: ci: "sometimes" is not one of`},
		{"unknown need", "entries:\n  - {path: a.yaml, purpose: x, needs: [oracle], ci: run}\n", `manifest.yaml:2: needs: "oracle" is not one of`},
		{"listed twice", "entries:\n  - {path: a.yaml, purpose: x, ci: run}\n  - {path: a.yaml, purpose: y, ci: run}\n", "manifest.yaml:3: path: a.yaml is listed already at line 2"},
		{"unclean path", "entries:\n  - {path: ./a.yaml, purpose: x, ci: run}\n", `manifest.yaml:2: path: "./a.yaml" is not a clean relative path`},
		{"no purpose", "entries:\n  - {path: a.yaml, ci: run}\n", "manifest.yaml:2: purpose: missing"},
		{"unknown field", "entries:\n  - {path: a.yaml, purpose: x, ci: run, owner: me}\n", "field owner not found"},
		{"empty", "entries: []\n", "no entries"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "manifest.yaml"), []byte(c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadLibrary(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}
