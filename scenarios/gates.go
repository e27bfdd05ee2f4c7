package scenarios

import "fmt"

// validateGates parses the gates and the knee with check (Checks.Gate: the results package's
// parser, which this package does not import); nil leaves them unparsed.
func (s *Scenario) validateGates(check func(expr string) error) Errors {
	var errs Errors
	for i, g := range s.Gates {
		if check == nil {
			break
		}
		if err := check(g); err != nil {
			errs = append(errs, &Error{Field: fmt.Sprintf("gates.%d", i), Msg: err.Error()})
		}
	}
	if s.Knee != "" && check != nil {
		if err := check(s.Knee); err != nil {
			errs = append(errs, &Error{Field: "knee", Msg: err.Error()})
		}
	}
	if s.Knee != "" && !s.Profile.Set() {
		errs = append(errs, &Error{Field: "knee", Msg: "needs a profile (ramp, steps or burst): the knee is where the rising load first breaks the objective"})
	}
	return errs
}
