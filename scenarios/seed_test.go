package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedRDBValidation: persistence.seed-rdb is checked before the run, its errors naming the
// file, line and field (or the matrix value that made the cell); a relative path is the
// scenario file's directory's, and comes out of EffectivePersistence absolute.
func TestSeedRDBValidation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.rdb"), []byte("REDIS0010\xff\x00\x00\x00\x00\x00\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "text.rdb"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "s.yaml")
	for _, tc := range []struct {
		name, yaml string
		want       string // "" = valid
	}{
		{"relative", "engine: server\nrate: 10\npersistence:\n  seed-rdb: ok.rdb\n", ""},
		{"with-policy", "engine: server\nrate: 10\npolicy: aof-always\npersistence:\n  seed-rdb: " + filepath.Join(dir, "ok.rdb") + "\n", ""},
		{"missing", "engine: server\nrate: 10\npersistence:\n  seed-rdb: nope.rdb\n", "s.yaml:4: persistence.seed-rdb: cannot read the seed file"},
		{"not-rdb", "engine: server\nrate: 10\npersistence:\n  seed-rdb: text.rdb\n", "s.yaml:4: persistence.seed-rdb: " + filepath.Join(dir, "text.rdb") + " is not an RDB file"},
		{"empty", "engine: server\nrate: 10\npersistence:\n  seed-rdb: \"\"\n", "persistence.seed-rdb: must name a dump.rdb file"},
		{"managed-redis", "engine: redis\nrate: 10\npersistence:\n  seed-rdb: ok.rdb\n", "engine redis does not read it"},
		{"matrix", "engine: server\nrate: 10\nmatrix:\n  persistence.seed-rdb: [ok.rdb, gone.rdb]\n", "s.yaml:4: matrix.persistence.seed-rdb.1: cannot read the seed file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse(file, []byte(tc.yaml), testChecks)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sc.EffectivePersistence()[SeedRDBKey]; got != filepath.Join(dir, "ok.rdb") {
				t.Errorf("seed-rdb = %q", got)
			}
			if sc.Policy != "" && sc.EffectivePersistence()["appendfsync"] != "always" {
				t.Errorf("the policy was lost: %v", sc.EffectivePersistence())
			}
		})
	}
}
