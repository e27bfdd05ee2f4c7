// Command qbench benchmarks queue designs and persistence policies: latency from the intended
// send time, consumer lag, and every message lost or duplicated, counted against acknowledgements.
//
// Data goes to stdout, progress and warnings to stderr. Exit codes: 0 ok, 1 runtime error,
// 2 bad usage or configuration, 3 a regression gate failed, 4 the run was interrupted (Ctrl-C:
// the result was written, marked interrupted), 5 the gates were inconclusive (a gate missed, but
// a side was flagged or the change was within the repetitions' range; --strict makes it 3).
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"qbench/bench"

	// Engines register themselves with the registry; the runner never imports them.
	_ "qbench/engines/all" // every engine registers itself; a new one is a line there
	"qbench/engines/redisq"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
	exitGate    = 3
	// exitInterrupted: stopped early by Ctrl-C or SIGTERM; results were written, marked so.
	exitInterrupted = 4
	// exitInconclusive: no gate failed conclusively, but one missed on flagged figures or
	// within the repetitions' range: not evidence of a regression (--strict makes it exitGate).
	exitInconclusive = 5
)

// usageError marks errors that are the user's input (flags, scenario files): exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	// The "server" engine target runs the in-repo server as a child process of this binary.
	redisq.RunChildServerIfAsked()
	root := newRoot()
	err := root.Execute()
	if err == nil {
		os.Exit(exitOK)
	}
	fmt.Fprintln(os.Stderr, "qbench:", err)
	var ue usageError
	var ge gateError
	var ie interruptedError
	var ic inconclusiveError
	switch {
	case errors.As(err, &ie):
		os.Exit(exitInterrupted)
	case errors.As(err, &ge):
		os.Exit(exitGate)
	case errors.As(err, &ic):
		os.Exit(exitInconclusive)
	case errors.As(err, &ue), !errors.As(err, new(ranError)) && isCobraUsage(err):
		os.Exit(exitUsage)
	default:
		os.Exit(exitRuntime)
	}
}

// newRoot is the whole command tree; tests run it without executing a command (docs_test.go).
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "qbench",
		Short:         "Benchmark queue designs and persistence policies: latency, lag and lost messages",
		Version:       bench.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("qbench {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(runCmd(), validateCmd(), serveCmd(), enginesCmd(), compareCmd(), exportCmd(), mergeCmd(), plotCmd(), reportCmd(), searchCmd(), calibrateCmd(), aofCmd(), lossyfsCmd(), k8sCmd(), markCmd(), recoverCmd(), versionCmd())
	usageOnBadArgs(root)
	markRunErrors(root)
	return root
}

// usageOnBadArgs makes a wrong number of arguments print the command's usage after the error
// (cobra's own message alone, "accepts 1 arg(s), received 0", does not say what to give).
func usageOnBadArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		usageOnBadArgs(sub)
	}
	check := c.Args
	if check == nil {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{fmt.Errorf("%s: %w\n\n%s", cmd.Name(), err, strings.TrimRight(cmd.UsageString(), "\n"))}
		}
		return nil
	}
}

// ranError marks an error a command's RunE returned: it is the command's own (exit 1 unless
// typed otherwise), never one of cobra's argument errors, whatever its text (a server's
// "unknown command" in a log record is not a usage error).
type ranError struct{ err error }

func (e ranError) Error() string { return e.err.Error() }
func (e ranError) Unwrap() error { return e.err }

// markRunErrors wraps every command's RunE so its errors are ranErrors.
func markRunErrors(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if err := run(cmd, args); err != nil {
				return ranError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markRunErrors(sub)
	}
}

// isCobraUsage recognises cobra's own argument errors (unknown command, wrong argument count),
// which cobra returns untyped; only asked about errors that did not come from a RunE.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "unknown flag", "unknown shorthand"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
