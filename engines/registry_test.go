package engines

import (
	"strings"
	"testing"
)

// A registration's names are checked at Register: names for a design the engine lacks, or a
// design with none (its first is the queue a half run must name), are programming errors.
func TestCheckNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names map[string][]string
		want  string // "" for no error
	}{
		{"ok", map[string][]string{"a": {"queue", "group"}}, ""},
		{"none", nil, ""},
		{"unknown design", map[string][]string{"zz": {"queue"}}, `names declared for design "zz"`},
		{"no queue", map[string][]string{"a": {}}, "design a: names []"},
		{"empty key", map[string][]string{"a": {"queue", ""}}, "none may be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Registration{Name: "t", Designs: []string{"a"}, Names: tc.names}
			err := r.checkNames()
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
