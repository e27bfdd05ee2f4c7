package scenarios

import (
	"strings"
	"testing"
)

// in_flight: 0, like no in_flight, is the default (as every zero in a scenario is); the error for
// a value out of range says so, with file, line and field, for the field and for a matrix cell.
func TestInFlightZeroIsTheDefault(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       int    // InFlight after parsing, when valid
		err        string // error substring, when not
	}{
		{"unset", "name: x\nrate: 10\n", DefaultInFlight, ""},
		{"zero", "name: x\nrate: 10\nin_flight: 0\n", DefaultInFlight, ""},
		{"one", "name: x\nrate: 10\nin_flight: 1\n", 1, ""},
		{"the largest", "name: x\nrate: 10\nin_flight: 1024\n", 1024, ""},
		{"negative", "name: x\nrate: 10\nin_flight: -1\n", 0, "bad.yaml:3: in_flight: must be between 1 and 1024 batches per producer, or 0 for the default 8 (got -1)"},
		{"too many", "name: x\nrate: 10\nin_flight: 1025\n", 0, "bad.yaml:3: in_flight: must be between 1 and 1024 batches per producer, or 0 for the default 8 (got 1025)"},
		{"matrix cell", "name: x\nrate: 10\nmatrix:\n  in_flight: [0, 2000]\n", 0, "bad.yaml:4: matrix.in_flight.1: must be between 1 and 1024 batches per producer, or 0 for the default 8 (got 2000)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := Parse("bad.yaml", []byte(c.yaml), testChecks)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want it to contain %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sc.InFlight != c.want {
				t.Fatalf("in_flight %d, want %d", sc.InFlight, c.want)
			}
		})
	}
	// A matrix cell of 0 runs with the default too.
	sc, err := Parse("ok.yaml", []byte("name: x\nrate: 10\nmatrix:\n  in_flight: [0, 16]\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[0].Scenario.InFlight != DefaultInFlight || cells[1].Scenario.InFlight != 16 {
		t.Fatalf("cells' in_flight: %+v", cells)
	}
}
