package results

import (
	"fmt"
	"io"
	"slices"
	"strconv"
)

// ReorderedText is the reordered count as a surface should show it: the count, or "n/a" when
// the engine promised this run's consumers no order (Summary.ReorderNotPromised says why, and
// NotKnown names reordered) or the run could not know it (a produce-only or consume-only run).
func ReorderedText(s Summary) string {
	if s.ReorderNotPromised != "" || s.Role != "" || slices.Contains(s.NotKnown, "reordered") {
		return "n/a"
	}
	return strconv.FormatInt(s.Ledger.Reordered, 10)
}

// writeOrder prints the summary's lines on order and on the scenario's poison messages: the
// reordered count with the order it holds the engine to (when it counted any), or n/a with the
// reason nothing was promised; poison retries and dead letters, apart from duplicates.
func writeOrder(w io.Writer, s Summary) {
	l := s.Ledger
	switch {
	case s.Role != "":
	case s.ReorderNotPromised != "":
		fmt.Fprintf(w, "          reordered n/a (%s)\n", s.ReorderNotPromised)
	case l.Reordered > 0:
		fmt.Fprintf(w, "          reordered %d (broke the order the engine owes %s)\n", l.Reordered, s.ReorderScope)
	}
	if l.PoisonRetries > 0 || s.DeadLettered > 0 {
		fmt.Fprintf(w, "          poison retries %d (redeliveries of poison messages, never acknowledged on purpose: not duplicates), dead-lettered %d (in the engine's dead-letter store at the end)\n",
			l.PoisonRetries, s.DeadLettered)
	}
}

// summaryDeadLetters is how many dead letters the summary names; the result lists up to
// MaxDeadLetters.
const summaryDeadLetters = 40

// writeDeadLetters names the run's dead letters (producer:sequence), ten to a line, so that a
// poison message can be looked up without opening the result file.
func writeDeadLetters(w io.Writer, r *Result) {
	if len(r.DeadLetters) == 0 {
		return
	}
	n := min(len(r.DeadLetters), summaryDeadLetters)
	fmt.Fprintf(w, "          dead letters (producer:seq, oldest first):")
	for i, m := range r.DeadLetters[:n] {
		if i > 0 && i%10 == 0 {
			fmt.Fprintf(w, "\n           ")
		}
		fmt.Fprintf(w, " %d:%d", m.Producer, m.Seq)
	}
	if more := r.Summary.DeadLettered - int64(n); more > 0 {
		fmt.Fprintf(w, " ... and %d more (the result's dead_letters lists up to %d)", more, MaxDeadLetters)
	}
	fmt.Fprintln(w)
}
