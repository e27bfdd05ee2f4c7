package main

import (
	"qbench/bench"
	"qbench/scenarios"
)

// loadScenario loads a scenario with the registry's engines and the results package's gate
// parser (bench.Checks); a bad file is a usage error.
func loadScenario(path string) (*scenarios.Scenario, error) {
	sc, err := scenarios.Load(path, bench.Checks())
	if err != nil {
		return nil, usageError{err}
	}
	return sc, nil
}
