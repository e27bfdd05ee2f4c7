package scenarios

import (
	"strings"
	"testing"
)

func TestParseProfiles(t *testing.T) {
	cases := []struct {
		name, yaml string
		check      func(*Scenario) bool
	}{
		{"ramp", "profile:\n  ramp: {from: 1000, to: 20000}\n", func(s *Scenario) bool {
			return s.Profile.IsRamp() && s.Profile.Ramp.To == 20000 && s.Arrival == "uniform" && s.Profile.PeakRate() == 20000
		}},
		{"steps", "duration: 10s\nprofile:\n  steps: [{rate: 1000, for: 5s}, {rate: 5000, for: 5s}]\n", func(s *Scenario) bool {
			return s.Profile.IsSteps() && len(s.Profile.Steps) == 2 && s.Profile.Steps[1].For.D().Seconds() == 5
		}},
		{"burst with poisson", "arrival: poisson\nprofile:\n  burst: {base: 2000, peak: 8000, every: 10s, for: 1s}\n", func(s *Scenario) bool {
			return s.Profile.IsBurst() && s.Arrival == "poisson" && s.Profile.Burst.Every.D().Seconds() == 10
		}},
		{"poisson at a constant rate", "rate: 500\narrival: poisson\n", func(s *Scenario) bool {
			return !s.Profile.Set() && s.Arrival == "poisson"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("p.yaml", []byte(c.yaml), testChecks)
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(s) {
				t.Fatalf("decoded as %+v", s)
			}
		})
	}
}

func TestProfileErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"bad arrival", "rate: 10\narrival: bursty\n", "p.yaml:2: arrival: must be uniform or poisson"},
		{"rate and profile", "rate: 10\nprofile:\n  ramp: {from: 1, to: 5}\n", "p.yaml:2: profile: replaces rate"},
		{"two forms", "profile:\n  ramp: {from: 1, to: 5}\n  burst: {base: 1, peak: 2, every: 2s, for: 1s}\n", "p.yaml:1: profile: takes one of ramp, steps or burst"},
		{"negative ramp", "profile:\n  ramp: {from: -1, to: 5}\n", "p.yaml:2: profile.ramp.from: needs from >= 0"},
		{"zero step rate", "profile:\n  steps:\n    - {rate: 10, for: 1s}\n    - {rate: 0, for: 1s}\n", "p.yaml:4: profile.steps.1.rate: must be a positive number"},
		{"step without time", "profile:\n  steps:\n    - {rate: 10}\n", "p.yaml:3: profile.steps.0.for: must be a positive duration"},
		{"steps past the duration", "duration: 2s\nprofile:\n  steps:\n    - {rate: 10, for: 3s}\n", "p.yaml:3: profile.steps: last 3s, longer than the duration 2s"},
		{"burst wider than its period", "profile:\n  burst: {base: 1, peak: 2, every: 1s, for: 2s}\n", "p.yaml:2: profile.burst.for: needs 0 < for < every"},
		{"zero burst peak", "profile:\n  burst: {base: 1, peak: 0, every: 2s, for: 1s}\n", "p.yaml:2: profile.burst.peak: must be a rate of at least 0.001 messages per second (got 0)"},
		{"unknown profile key", "profile:\n  sine: {}\n", "p.yaml:2: profile.sine: unknown field"},
		{"ramp past the limit", "profile:\n  ramp: {from: 1, to: 1e9}\n", "p.yaml:1: profile: peaks at 1e+09 messages per second"},
		{"knee without profile", "rate: 10\nknee: produce.p99 <= 5ms\n", "p.yaml:2: knee: needs a profile"},
		{"no rate and no profile", "arrival: poisson\n", "p.yaml:1: rate: is required"},
		{"bad matrix value", "profile:\n  ramp: {from: 1, to: 5}\nmatrix:\n  profile.ramp.to: [10, -3]\n", "p.yaml:4: matrix.profile.ramp.to.1: needs from >= 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(c.yaml), testChecks)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// arrival and the profile's fields are matrix axes.
func TestMatrixSweepsWorkload(t *testing.T) {
	s, err := Parse("m.yaml", []byte("profile:\n  ramp: {from: 1000, to: 2000}\nmatrix:\n  arrival: [uniform, poisson]\n  profile.ramp.to: [5000, 9000]\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := s.Cells()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cells {
		got = append(got, c.Scenario.Arrival+":"+c.Name)
		if c.Scenario.Profile.Ramp.From != 1000 {
			t.Fatalf("cell %s lost the ramp's from", c.Name)
		}
	}
	want := "uniform:arrival=uniform,profile.ramp.to=5000 uniform:arrival=uniform,profile.ramp.to=9000 poisson:arrival=poisson,profile.ramp.to=5000 poisson:arrival=poisson,profile.ramp.to=9000"
	if strings.Join(got, " ") != want {
		t.Fatalf("cells %v", got)
	}
	if cells[3].Scenario.Profile.Ramp.To != 9000 {
		t.Fatalf("last cell ramps to %g", cells[3].Scenario.Profile.Ramp.To)
	}
}
