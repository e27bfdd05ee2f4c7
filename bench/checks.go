package bench

import (
	"qbench/engines"
	"qbench/results"
	"qbench/scenarios"
)

// Checks are the checks scenario validation needs from outside the scenarios package: every
// registered engine as validation sees it (its designs, the sections it reads, its own section's
// decoder, its faults) and the gate parser. The command line and the tests pass them to
// scenarios.Parse and scenarios.Load.
func Checks() scenarios.Checks {
	var es []*scenarios.Engine
	for _, r := range engines.All() {
		es = append(es, &scenarios.Engine{
			Name: r.Name, Designs: r.Designs, Sections: r.Sections, Options: r.Options, Decode: r.Decode,
			Check: checkFor(r.Check), Groups: r.Groups, Moved: r.Moved, Names: r.Names, CheckNames: checkNamesFor(r.CheckNames),
			Faults: r.Faults, NeedsAddress: r.NeedsAddress, ClosedLoopBatch: r.ClosedLoop.Batch, ClosedLoopInFlight: r.ClosedLoop.InFlight,
		})
	}
	return scenarios.Checks{Engines: es, Gate: func(expr string) error {
		_, err := results.ParseGate(expr)
		return err
	}}
}

// checkFor hands a registration's Check the plan in its own package's type: scenarios.Plan is a
// copy of engines.Plan (scenarios imports no engine package); TestPlanCopyComplete holds the
// two to the same fields.
func checkFor(check func(any, engines.Plan) error) func(any, scenarios.Plan) error {
	if check == nil {
		return nil
	}
	return func(o any, p scenarios.Plan) error { return check(o, planFor(p)) }
}

// checkNamesFor is checkFor for a registration's CheckNames.
func checkNamesFor(check func(engines.Plan) error) func(scenarios.Plan) error {
	if check == nil {
		return nil
	}
	return func(p scenarios.Plan) error { return check(planFor(p)) }
}

func planFor(p scenarios.Plan) engines.Plan {
	return engines.Plan{Design: p.Design, Consumers: p.Consumers, Names: p.Names, Consumes: p.Consumes, AnyDesign: p.AnyDesign}
}
