package scenarios

import "fmt"

// GateChecker parses a gate expression ("e2e.p99 <= 20ms", "produce.p99 <= +10%"); the command
// line wires it to the results package, which this package does not import.
var GateChecker func(expr string) error

func (s *Scenario) validateGates() Errors {
	var errs Errors
	for i, g := range s.Gates {
		if GateChecker == nil {
			break
		}
		if err := GateChecker(g); err != nil {
			errs = append(errs, &Error{Field: fmt.Sprintf("gates.%d", i), Msg: err.Error()})
		}
	}
	if s.Knee != "" && GateChecker != nil {
		if err := GateChecker(s.Knee); err != nil {
			errs = append(errs, &Error{Field: "knee", Msg: err.Error()})
		}
	}
	if s.Knee != "" && !s.Profile.Set() {
		errs = append(errs, &Error{Field: "knee", Msg: "needs a profile (ramp, steps or burst): the knee is where the rising load first breaks the objective"})
	}
	return errs
}
