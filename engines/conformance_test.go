package engines

import (
	"strings"
	"testing"
)

// A registration's conformance table is checked at Register: a promise the suite does not know,
// or one for a design the engine lacks, would leave the suite silently short of a case.
func TestCheckConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    map[string]Conformance
		want string // "" for no error
	}{
		{"ok", map[string]Conformance{"a": {Promises: []string{PromiseExactlyOnceInOrder, PromiseRedelivery},
			Scenario: map[string]string{PromiseRedelivery: "x: 1\n"}}}, ""},
		{"unknown design", map[string]Conformance{"zz": {Promises: []string{PromiseTrimming}}}, `design "zz"`},
		{"unknown promise", map[string]Conformance{"a": {Promises: []string{"exactly-twice"}}}, `unknown promise "exactly-twice"`},
		{"scenario without promise", map[string]Conformance{"a": {Promises: []string{PromiseTrimming},
			Scenario: map[string]string{PromiseDeadLetter: "x: 1\n"}}}, `promise "dead-letter", which it does not make`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Registration{Name: "t", Designs: []string{"a"}, Conformance: tc.c}
			err := r.checkConformance()
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if tc.want == "" && !r.Promises("a", PromiseRedelivery) {
				t.Fatalf("Promises(a, redelivery) false")
			}
		})
	}
}
