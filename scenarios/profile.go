package scenarios

import "fmt"

// Profile varies the offered rate over the run, in place of a constant rate:. One of its forms
// is set. Rates are messages per second over all producers.
type Profile struct {
	// Ramp goes linearly from From to To over the whole duration (warm-up included).
	Ramp Ramp `yaml:"ramp,omitempty" json:"ramp,omitzero"`
	// Steps hold each rate for its time, in order; the last rate holds to the end of the run.
	Steps []Step `yaml:"steps,omitempty" json:"steps,omitempty"`
	// Burst offers Base, with Peak for the last For of every Every.
	Burst Burst `yaml:"burst,omitempty" json:"burst,omitzero"`
}

// Ramp is a linear rate ramp.
type Ramp struct {
	From float64 `yaml:"from" json:"from"`
	To   float64 `yaml:"to" json:"to"`
}

// Step is one rate held for a time.
type Step struct {
	Rate float64  `yaml:"rate" json:"rate"`
	For  Duration `yaml:"for" json:"for"`
}

// Burst is a base rate with a peak of width For closing every period Every.
type Burst struct {
	Base  float64  `yaml:"base" json:"base"`
	Peak  float64  `yaml:"peak" json:"peak"`
	Every Duration `yaml:"every" json:"every"`
	For   Duration `yaml:"for" json:"for"`
}

// IsRamp, IsSteps and IsBurst say which form is set.
func (p Profile) IsRamp() bool  { return p.Ramp != Ramp{} }
func (p Profile) IsSteps() bool { return len(p.Steps) > 0 }
func (p Profile) IsBurst() bool { return p.Burst != Burst{} }

// Set says a profile replaces the constant rate.
func (p Profile) Set() bool { return p.IsRamp() || p.IsSteps() || p.IsBurst() }

// PeakRate is the highest rate the profile offers.
func (p Profile) PeakRate() float64 {
	switch {
	case p.IsRamp():
		return max(p.Ramp.From, p.Ramp.To)
	case p.IsBurst():
		return max(p.Burst.Base, p.Burst.Peak)
	}
	var m float64
	for _, s := range p.Steps {
		m = max(m, s.Rate)
	}
	return m
}

// validateWorkload checks arrival: and profile:.
func (s *Scenario) validateWorkload(bad func(field, format string, args ...any)) {
	switch s.Arrival {
	case "uniform", "poisson":
	default:
		bad("arrival", "must be uniform or poisson (got %q)", s.Arrival)
	}
	p := s.Profile
	if !p.Set() {
		return
	}
	n := 0
	for _, set := range []bool{p.IsRamp(), p.IsSteps(), p.IsBurst()} {
		if set {
			n++
		}
	}
	if n > 1 {
		bad("profile", "takes one of ramp, steps or burst")
	}
	if s.Rate.Max || s.Rate.PerSecond != 0 {
		bad("profile", "replaces rate: leave rate out (the profile sets the offered rate)")
	}
	if p.PeakRate() > MaxRate {
		bad("profile", "peaks at %g messages per second, more than %d in one process", p.PeakRate(), MaxRate)
	}
	if p.IsRamp() {
		if p.Ramp.From < 0 || p.Ramp.To < 0 || p.Ramp.From+p.Ramp.To <= 0 {
			f := "profile.ramp.to" // the field at fault, so a matrix over it points at its value
			if p.Ramp.From < 0 {
				f = "profile.ramp.from"
			}
			bad(f, "needs from >= 0 and to >= 0, not both 0 (got %g to %g)", p.Ramp.From, p.Ramp.To)
		}
		for _, end := range []struct {
			field string
			rate  float64
		}{{"profile.ramp.from", p.Ramp.From}, {"profile.ramp.to", p.Ramp.To}} {
			if end.rate > 0 && end.rate < MinRate {
				bad(end.field, "must be 0 or at least %g messages per second (got %g)", MinRate, end.rate)
			}
		}
	}
	var total Duration
	for i, st := range p.Steps {
		f := fmt.Sprintf("profile.steps.%d", i)
		if st.Rate <= 0 {
			bad(f+".rate", "must be a positive number of messages per second (got %g)", st.Rate)
		} else if st.Rate < MinRate {
			bad(f+".rate", "must be at least %g messages per second (got %g)", MinRate, st.Rate)
		}
		if st.For <= 0 {
			bad(f+".for", "must be a positive duration (got %s)", st.For)
		}
		total += st.For
	}
	if p.IsSteps() && s.Duration > 0 && total > s.Duration {
		bad("profile.steps", "last %s, longer than the duration %s", total, s.Duration)
	}
	if p.IsBurst() {
		b := p.Burst
		if b.Base < MinRate {
			bad("profile.burst.base", "must be a rate of at least %g messages per second (got %g)", MinRate, b.Base)
		}
		if b.Peak < MinRate {
			bad("profile.burst.peak", "must be a rate of at least %g messages per second (got %g)", MinRate, b.Peak)
		}
		if b.Every <= 0 || b.For <= 0 || b.For >= b.Every {
			bad("profile.burst.for", "needs 0 < for < every (got for %s, every %s)", b.For, b.Every)
		}
	}
}
