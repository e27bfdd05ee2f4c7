package main

// Ctrl-C: one handler for `run` and `sweep`, and the interrupted exit.

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
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
type interruptedError struct{ gates error }

func (e interruptedError) Error() string {
	if e.gates != nil {
		return "interrupted: the run was stopped early; " + e.gates.Error()
	}
	return "interrupted: the run was stopped early; the result covers what ran"
}

// interrupted wraps err (from the gates) when the run was interrupted.
func interrupted(was bool, err error) error {
	if !was {
		return err
	}
	return interruptedError{gates: err}
}
