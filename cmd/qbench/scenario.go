package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"qbench/bench"
	"qbench/scenarios"
)

// memoryBudget is --memory-budget, for every command that loads a scenario.
var memoryBudget string

func memoryBudgetFlag(root *cobra.Command) {
	root.PersistentFlags().StringVar(&memoryBudget, "memory-budget", "",
		"the memory one run's ledger may take, e.g. 8GiB (default: $"+scenarios.MemoryBudgetEnv+", else half of MemAvailable); bounds rate x duration, and caps a rate: max run")
}

// loadScenario loads a scenario with the registry's engines and the results package's gate
// parser (bench.Checks) and the memory budget; a bad file is a usage error.
func loadScenario(path string) (*scenarios.Scenario, error) {
	c := bench.Checks()
	if memoryBudget != "" {
		n, err := scenarios.ParseBytes(memoryBudget)
		if err != nil {
			return nil, usageError{fmt.Errorf("--memory-budget: %w", err)}
		}
		c.MemoryBudget = n
	}
	sc, err := scenarios.Load(path, c)
	if err != nil {
		return nil, usageError{err}
	}
	return sc, nil
}
