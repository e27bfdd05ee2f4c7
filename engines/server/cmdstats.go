package server

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Command and error statistics, as Redis 7.0.15 keeps them (INFO commandstats, errorstats,
// total_error_replies; CONFIG RESETSTAT clears them):
//   - every error reply counts once in total_error_replies and under its code (the first word,
//     if a space comes within Redis's 32-byte look, else ERR), whichever path sends it;
//   - a command that runs counts a call, and a failed call if it replied an error (the errors of
//     the commands inside an EXEC count for them, not for EXEC); one refused before running
//     (wrong arity, NOAUTH, ...) counts a rejected call;
//   - a blocking command counts when it is answered (served, timed out, or an error such as
//     -NOGROUP when its group is destroyed), as Redis's updateStatsOnUnblock, not when it blocks.

// cmdStat is one command's counters.
type cmdStat struct {
	calls, usec, rejected, failed int64
}

// errorStats are the server's error counters. Store lock.
type errorStats struct {
	total  int64
	byCode map[string]int64
	mark   int64 // total when the last call began or ended (failed-call detection)
	cmds   map[*command]*cmdStat
}

func (e *errorStats) reset() { *e = errorStats{} }

func (e *errorStats) cmd(c *command) *cmdStat {
	if e.cmds == nil {
		e.cmds = map[*command]*cmdStat{}
	}
	st := e.cmds[c]
	if st == nil {
		st = &cmdStat{}
		e.cmds[c] = st
	}
	return st
}

// countError counts one error reply with text msg (no leading '-'), as afterErrorReply does.
func (e *errorStats) countError(msg string) {
	e.total++
	code := "ERR"
	// Redis looks for the space in the first 32 bytes of "-CODE ...".
	if i := strings.IndexByte(msg[:min(len(msg), 31)], ' '); i > 0 {
		code = msg[:i]
	}
	if e.byCode == nil {
		e.byCode = map[string]int64{}
	}
	e.byCode[code]++
}

// beginCall and endCall bracket a command's run: endCall counts the call, failed if an error
// was replied since the last bracket.
func (e *errorStats) beginCall() { e.mark = e.total }

func (e *errorStats) endCall(c *command, d time.Duration) {
	st := e.cmd(c)
	st.calls++
	st.usec += d.Microseconds()
	if e.total > e.mark {
		st.failed++
	}
	e.mark = e.total
}

// unblocked counts a blocking command answered after it blocked; failed if reply is an error.
func (e *errorStats) unblocked(c *command, reply any) {
	if c == nil {
		return
	}
	st := e.cmd(c)
	st.calls++
	if _, ok := reply.(error); ok {
		st.failed++
	}
}

func (e *errorStats) writeCommandstats(b *strings.Builder) {
	b.WriteString("# Commandstats\r\n")
	type row struct {
		name string
		st   *cmdStat
	}
	var rows []row
	for c, st := range e.cmds {
		if st.calls > 0 || st.rejected > 0 || st.failed > 0 {
			rows = append(rows, row{c.fullname, st})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	for _, r := range rows {
		per := 0.0
		if r.st.calls > 0 {
			per = float64(r.st.usec) / float64(r.st.calls)
		}
		fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
			r.name, r.st.calls, r.st.usec, per, r.st.rejected, r.st.failed)
	}
}

func (e *errorStats) writeErrorstats(b *strings.Builder) {
	b.WriteString("# Errorstats\r\n")
	codes := make([]string, 0, len(e.byCode))
	for c := range e.byCode {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		fmt.Fprintf(b, "errorstat_%s:count=%d\r\n", c, e.byCode[c])
	}
}
