package main

// Ctrl-C: one handler for `run` and `sweep`, and the interrupted exit.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"qbench/bench"
)

// loadContext is the run's Ctrl-C handling: the first stops the load (results are still
// written), a second exits at once.
func loadContext() (ctx, stop context.Context, cancel func()) {
	ctx, cancelAll := context.WithCancel(context.Background())
	stop, stopLoad := context.WithCancel(ctx)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		fmt.Fprintln(os.Stderr, "\nqbench: stopping; press Ctrl-C again to quit at once")
		stopLoad()
		if _, ok := <-sigs; ok {
			os.Exit(exitRuntime)
		}
	}()
	return ctx, stop, func() {
		signal.Stop(sigs)
		close(sigs)
		stopLoad()
		cancelAll()
	}
}

// interruptedError says the run was stopped early (Ctrl-C): what ran was written, marked
// interrupted, and the exit code (4) tells CI it was not a full run.
type interruptedError struct {
	gates error
	// start: stopped during the engine's start-up, before the load began: there is no result.
	start error
}

func (e interruptedError) Error() string {
	if e.start != nil {
		return e.start.Error()
	}
	if e.gates != nil {
		return "interrupted: the run was stopped early; " + e.gates.Error()
	}
	return "interrupted: the run was stopped early; the result covers what ran"
}

// startInterrupted turns a run stopped during the engine's start-up into the interrupted exit.
func startInterrupted(err error) error {
	if errors.Is(err, bench.ErrStartInterrupted) {
		return interruptedError{start: err}
	}
	return err
}

// interrupted wraps err (from the gates) when the run was interrupted.
func interrupted(was bool, err error) error {
	if !was {
		return err
	}
	return interruptedError{gates: err}
}
