// Package dummy is a test-only engine: a registration and nothing else, wrapping the null
// engine's channel queue under a name and design of its own. It is linked only where a test
// imports it (the bench tests, and qbench built with -tags qbench_dummy), to prove that an engine
// reaches `qbench engines`, scenario validation and the conformance suite by being registered:
// this file is the whole of it.
package dummy

import (
	"context"
	"strings"

	"qbench/engines"
	"qbench/engines/nullq"
)

// Name is the engine's name; Design its one design.
const (
	Name   = "dummy"
	Design = "queue"
)

func init() {
	engines.Register(engines.Registration{
		Name:    Name,
		Designs: []string{Design},
		Summary: "a test-only engine: the null engine's in-process channel under another name",
		New:     newEngine,
		Conformance: map[string]engines.Conformance{
			Design: {Promises: []string{engines.PromiseExactlyOnceInOrder, engines.PromiseCompetingConsumers}},
		},
		// The names: its design takes and their rule, to prove that validation learns them from
		// the registration (the null engine's channel is the run's own whatever the name).
		Names: map[string][]string{Design: {"queue"}}, CheckNames: checkNames,
	})
}

// checkNames stands in for a system's naming rule.
func checkNames(p engines.Plan) error {
	if q := p.Names["queue"]; strings.Trim(q, "abcdefghijklmnopqrstuvwxyz") != "" {
		return nameError("must be lowercase letters a to z")
	}
	return nil
}

type nameError string

func (e nameError) Error() string { return string(e) }
func (e nameError) Field() string { return "queue" }

// engine is the null engine, naming itself for the result.
type engine struct{ *nullq.Engine }

var (
	_ engines.FactReporter = engine{}
	_ engines.Sweeper      = engine{}
	_ engines.LagReporter  = engine{}
	_ engines.InProcess    = engine{}
)

func newEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	e, err := nullq.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	return engine{e.(*nullq.Engine)}, nil
}

// Facts are the null engine's, under this engine's name.
func (e engine) Facts(ctx context.Context) engines.Facts {
	f := e.Engine.Facts(ctx)
	f.Name = Name
	return f
}
