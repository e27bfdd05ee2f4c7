package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"qbench/bench"
	"qbench/scenarios"
)

// memoryBudget is --memory-budget, on the commands that run or check a scenario's schedule (run,
// validate, search, calibrate); the others load none or only print it (k8s).
var memoryBudget string

func memoryBudgetFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&memoryBudget, "memory-budget", "",
		"the memory one run's ledger may take, e.g. 8GiB (default: $"+scenarios.MemoryBudgetEnv+", else half of MemAvailable); bounds rate x duration, and caps a rate: max run")
}

// loadScenario loads a scenario with the registry's engines and the results package's gate
// parser (bench.Checks) and the memory budget; a bad file is a usage error.
func loadScenario(path string) (*scenarios.Scenario, error) {
	c, err := scenarioChecks()
	if err != nil {
		return nil, err
	}
	sc, err := scenarios.Load(path, c)
	if err != nil {
		return nil, usageError{err}
	}
	warn(sc.Deprecated)
	return sc, nil
}

// warn prints a scenario's deprecation warnings on stderr, each with its file and line: the file
// was read as its new form.
func warn(ws error) {
	var es scenarios.Errors
	if !errors.As(ws, &es) {
		return
	}
	for _, w := range es {
		fmt.Fprintln(os.Stderr, "warning: "+w.Error())
	}
}

// scenarioChecks are the checks every scenario is loaded with: the registry's engines, the
// results package's gate parser and the memory budget.
func scenarioChecks() (scenarios.Checks, error) {
	c := bench.Checks()
	if memoryBudget != "" {
		n, err := scenarios.ParseBytes(memoryBudget)
		if err != nil {
			return c, usageError{fmt.Errorf("--memory-budget: %w", err)}
		}
		c.MemoryBudget = n
	}
	return c, nil
}
