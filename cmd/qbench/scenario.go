package main

import (
	"fmt"
	"strings"

	"qbench/engines"
	"qbench/scenarios"
)

func init() {
	// Scenario validation checks engine and design names against the registry.
	scenarios.EngineChecker = func(engine, design string) (string, error) {
		reg, err := engines.Lookup(engine)
		if err != nil {
			return "engine", err
		}
		if !reg.Supports(design) {
			return "design", errDesign{engine: engine, design: design, known: reg.Designs}
		}
		return "", nil
	}
	// A fault the engine cannot carry out is refused before the run, naming who can.
	scenarios.FaultChecker = func(engine, kind string) error {
		reg, err := engines.Lookup(engine)
		if err != nil || reg.CanFault(kind) {
			return nil // an unknown engine is reported once, by EngineChecker
		}
		return fmt.Errorf("engine %s cannot carry out a %s (engines that can: %s)", engine, kind, strings.Join(engines.EnginesFor(kind), ", "))
	}
}

type errDesign struct {
	engine, design string
	known          []string
}

func (e errDesign) Error() string {
	return "engine " + e.engine + " has no design \"" + e.design + "\" (known: " + strings.Join(e.known, ", ") + ")"
}

func loadScenario(path string) (*scenarios.Scenario, error) {
	sc, err := scenarios.Load(path)
	if err != nil {
		return nil, usageError{err}
	}
	return sc, nil
}
