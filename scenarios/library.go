package scenarios

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	yaml "go.yaml.in/yaml/v3"
)

// LibraryDir is the shipped scenario library, relative to the module root.
const LibraryDir = "scenarios/library"

// LibraryEntry is one shipped file in the library's manifest (library/manifest.yaml): the tests
// that run shipped scenarios select them by its CI field, not by file names.
type LibraryEntry struct {
	Path    string   `yaml:"path"`    // relative to the library folder
	Purpose string   `yaml:"purpose"` // one line
	Needs   []string `yaml:"needs"`   // what it runs on (LibraryNeeds)
	CI      string   `yaml:"ci"`      // how the tests run it (LibraryCI)
	Line    int      `yaml:"-"`       // the entry's line in the manifest, for errors
}

// LibraryNeeds are the values of an entry's needs.
var LibraryNeeds = []string{"embedded", "server", "redis", "redis-cluster", "redis-sentinel", "kafka", "jetstream", "rabbitmq", "root+fuse", "root+cgroup"}

// LibraryCI are the values of an entry's ci: run as shipped (shortened), run as a
// produce-only/consume-only pair, run as a failure scenario with an asserted outcome, load only,
// or none (not a scenario: a script or data).
var LibraryCI = []string{"run", "pair", "failure", "load", "none"}

// ReadLibrary reads dir/manifest.yaml and checks each entry's fields (not that its file exists:
// the library's tests do that). Errors name manifest:line: field.
func ReadLibrary(dir string) ([]LibraryEntry, error) {
	file := filepath.Join(dir, "manifest.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Entries []yaml.Node `yaml:"entries"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	seen := map[string]int{}
	var out []LibraryEntry
	for _, n := range doc.Entries {
		// Node.Decode is not strict: a misspelt field is refused here, as the top level's are.
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains([]string{"path", "purpose", "needs", "ci"}, k.Value) {
				return nil, fmt.Errorf("%s:%d: field %s not found in a library entry", file, k.Line, k.Value)
			}
		}
		var e LibraryEntry
		if err := n.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, n.Line, err)
		}
		e.Line = n.Line
		bad := func(field, format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s: %s", file, n.Line, field, fmt.Sprintf(format, a...))
		}
		switch {
		case e.Path == "" || filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path:
			return nil, bad("path", "%q is not a clean relative path", e.Path)
		case seen[e.Path] != 0:
			return nil, bad("path", "%s is listed already at line %d", e.Path, seen[e.Path])
		case e.Purpose == "":
			return nil, bad("purpose", "missing")
		case !slices.Contains(LibraryCI, e.CI):
			return nil, bad("ci", "%q is not one of %v", e.CI, LibraryCI)
		}
		for _, need := range e.Needs {
			if !slices.Contains(LibraryNeeds, need) {
				return nil, bad("needs", "%q is not one of %v", need, LibraryNeeds)
			}
		}
		seen[e.Path] = n.Line
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no entries", file)
	}
	return out, nil
}

// LibraryFiles returns the paths (joined to dir) of the entries whose CI is one of ci.
func LibraryFiles(dir string, entries []LibraryEntry, ci ...string) []string {
	var files []string
	for _, e := range entries {
		if slices.Contains(ci, e.CI) {
			files = append(files, filepath.Join(dir, e.Path))
		}
	}
	return files
}
