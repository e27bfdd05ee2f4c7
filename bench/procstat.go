package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"qbench/engines"
)

// procSample is what /proc says of the server process of an engine qbench started itself (its
// Facts report settings["pid"]): CPU, resident memory and bytes the device wrote, read when the
// producers start and when the consumers stop (and around each crash fault, procTracker), so that
// the report can say what each policy costs the engine per message. /proc has no fsync count and
// no log size: fsyncs come from the engine's own counter when it keeps one (the in-repo server's
// aof_fsyncs, in its facts), in process too, and the log's size from the engine's fact
// log_size_bytes (Redis's aof_current_size: the records appended, never the zeros a log is
// preallocated with, which /proc's write_bytes counts).
type procSample struct {
	pid                int
	cpuNs, rss, writeB int64
	ok                 bool
	fsyncs             int64
	fsyncsOK           bool
	logB, logRewrites  int64
	logOK              bool
}

// Fact and stat names: the engine's facts counting its fsyncs since its server started and its
// log's size now; the run's share of them in Engine.Stats.
const (
	fsyncFact   = "aof_fsyncs"
	statFsyncs  = "engine_fsyncs"
	logSizeFact = "log_size_bytes"
	// logRewritesFact counts the log's rewrites: across one, the size's growth is not what was
	// appended.
	logRewritesFact = "log_rewrites"
	// statLogBytes is what the engine appended to its log over the run: the figure a report
	// divides by the messages as "log bytes / msg".
	statLogBytes = "engine_log_bytes"
	// statWriteBytes is what the device wrote for the server process (/proc write_bytes),
	// preallocated zeros and file-system metadata included: "device writes / msg".
	statWriteBytes = "proc_write_bytes"
	// statRestarts is how many times the server was restarted (crash faults) during the span its
	// CPU, device writes, log bytes and fsyncs are summed over; absent when it was not.
	statRestarts = "proc_restarts"
	// statCostUnknown is 1 when the server's process changed without a crash fault qbench
	// injected (it restarted on its own, or was replaced): its CPU, device writes, log bytes and
	// fsyncs over the run cannot be summed and are left out.
	statCostUnknown = "proc_cost_unknown"
	// statLogUnknown is 1 when the engine keeps a log but its growth over the run is not what it
	// appended: the log was rewritten (BGREWRITEAOF, an automatic rewrite) or shrank.
	statLogUnknown = "engine_log_unknown"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat; 100 on every Linux
// architecture qbench runs on.
const clockTicks = 100

func readProc(pid int) procSample {
	s := procSample{pid: pid}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return s
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state): utime is field 14, stime 15, rss (pages) 24.
	if len(f) < 22 {
		return s
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	rss, _ := strconv.ParseInt(f[21], 10, 64)
	s.cpuNs = (ut + st) * int64(time.Second) / clockTicks
	s.rss = rss * int64(os.Getpagesize())
	if io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid)); err == nil {
		for _, line := range strings.Split(string(io), "\n") {
			if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
				s.writeB, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			}
		}
	}
	s.ok = true
	return s
}

// engineProc reads the engine's server PID from its facts and samples it, and the engine's fsync
// counter if it keeps one; no /proc sample (ok false) when the engine runs in qbench's own
// process (its cost is the generator's) or reports no PID.
func engineProc(ctx context.Context, eng engines.Engine) procSample {
	fr, ok := eng.(engines.FactReporter)
	if !ok {
		return procSample{}
	}
	fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	facts := fr.Facts(fctx)
	s := procSample{}
	pid, err := strconv.Atoi(facts.Settings["pid"])
	if ip, in := eng.(engines.InProcess); !(in && ip.InProcess()) && err == nil && pid > 0 && pid != os.Getpid() {
		s = readProc(pid)
	}
	s.fsyncs, s.fsyncsOK = facts.Stats[fsyncFact]
	s.logB, s.logOK = facts.Stats[logSizeFact]
	s.logRewrites = facts.Stats[logRewritesFact]
	return s
}

// procTracker follows the engine's server over the run: the sample at the producers' start is
// the first process's baseline; a crash fault (crashAndRestart) closes that process's share just
// before the kill and opens the next one's once the server is back, so that the run's engine cost
// is summed over every process that served it. A process started during the run counts from
// zero (its start-up and log replay are the engine's cost of the crash), except its log, which
// counts from the size it loaded.
type procTracker struct {
	mu       sync.Mutex
	base     procSample // the current process's baseline
	acc      procTotals // what the processes that ended contributed
	restarts int
	// down: a crash closed the last process's share and no process has been sampled since.
	down bool
	// unknown: a process's share could not be closed (no sample before the kill, or its pid
	// changed): CPU and bytes are not summed.
	unknown bool
}

// procTotals are the summed shares of the server processes that ended; the Seen flags say a
// share was measured, the Unknown ones that one could not be.
type procTotals struct {
	cpuNs, writeB, logB, fsyncs int64
	rss                         int64 // the largest any process reached
	procSeen, fsyncsSeen        bool
	logSeen                     bool
	fsyncsUnknown, logUnknown   bool
}

func (t *procTracker) start(s procSample) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.base = s
}

// pid is the server's current process (0 when none is sampled: not started by qbench, in
// process, or down after a crash).
func (t *procTracker) pid() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.down || !t.base.ok {
		return 0
	}
	return t.base.pid
}

// beforeCrash closes the current process's share with a sample taken just before its kill.
func (t *procTracker) beforeCrash(pre procSample) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.base
	if t.down || !b.ok && !b.fsyncsOK && !b.logOK {
		return // nothing measured (the engine is not a process qbench samples), or still down
	}
	if b.ok && (!pre.ok || pre.pid != b.pid) {
		t.unknown = true
	}
	if b.ok && pre.ok && pre.pid == b.pid {
		t.acc.cpuNs += pre.cpuNs - b.cpuNs
		t.acc.writeB += pre.writeB - b.writeB
		t.acc.rss = max(t.acc.rss, pre.rss)
		t.acc.procSeen = true
	}
	if b.fsyncsOK && pre.fsyncsOK && pre.fsyncs >= b.fsyncs {
		t.acc.fsyncs += pre.fsyncs - b.fsyncs
		t.acc.fsyncsSeen = true
	} else if b.fsyncsOK {
		t.acc.fsyncsUnknown = true
	}
	if b.logOK && pre.logOK && pre.logB >= b.logB && pre.logRewrites == b.logRewrites {
		t.acc.logB += pre.logB - b.logB
		t.acc.logSeen = true
	} else if b.logOK {
		t.acc.logUnknown = true // a log rewritten or truncated: its growth is not what was appended
	}
	t.down = true
}

// crashFailed reopens the process's share from the sample taken before a crash that did not
// happen: the process lives on.
func (t *procTracker) crashFailed(pre procSample) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.down {
		t.down, t.base = false, pre
	}
}

// afterRestart opens the new process's share: CPU, device writes and fsyncs from zero (a new
// process, a new counter), the log from the size it loaded.
func (t *procTracker) afterRestart(post procSample) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.down {
		return
	}
	t.down = false
	t.restarts++
	t.base = procSample{pid: post.pid, ok: post.ok, fsyncsOK: post.fsyncsOK, logB: post.logB, logRewrites: post.logRewrites, logOK: post.logOK}
}

// stats are the engine's own costs over the run, for Engine.Stats: CPU, device writes, log bytes
// and fsyncs summed over every server process between the start and end samples, resident
// memory the largest any of them held (statRestarts and statCostUnknown say which). A server
// that changed process without a crash fault qbench injected leaves them unknown.
func (t *procTracker) stats(end procSample) map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int64{}
	b, acc := t.base, t.acc
	if t.restarts > 0 || t.down {
		out[statRestarts] = int64(t.restarts)
	}
	unknown := t.unknown || !t.down && b.ok && end.ok && end.pid != b.pid
	switch {
	case unknown:
		out[statCostUnknown] = 1
		if end.ok {
			out["proc_rss_bytes"] = end.rss
		}
		return out // fsyncs and log bytes too: a process's share is missing
	case t.down && acc.procSeen: // never came back: the crashed processes' shares are the whole
		out["proc_rss_bytes"], out["proc_cpu_ns"], out[statWriteBytes] = acc.rss, acc.cpuNs, acc.writeB
	case !t.down && b.ok && end.ok:
		out["proc_rss_bytes"] = max(acc.rss, end.rss)
		out["proc_cpu_ns"] = acc.cpuNs + end.cpuNs - b.cpuNs
		out[statWriteBytes] = acc.writeB + end.writeB - b.writeB
	}
	// A counter that went back restarted with its server (or its log was rewritten) unseen: the
	// span's count is unknown.
	if n, ok := counterSpan(t.down, acc.fsyncsSeen, acc.fsyncsUnknown, acc.fsyncs, b.fsyncsOK && end.fsyncsOK, b.fsyncs, end.fsyncs); ok {
		out[statFsyncs] = n
	}
	if n, ok := counterSpan(t.down, acc.logSeen, acc.logUnknown, acc.logB, b.logOK && end.logOK && b.logRewrites == end.logRewrites, b.logB, end.logB); ok {
		out[statLogBytes] = n
	} else if acc.logUnknown || b.logOK && end.logOK {
		out[statLogUnknown] = 1
	}
	return out
}

// counterSpan is a counter's growth over the run: the ended processes' shares (acc) plus the
// current process's growth (start to end); not ok when a share is unknown or the counter went
// back (a restart unseen, a log rewritten).
func counterSpan(down, accSeen, accUnknown bool, acc int64, bothOK bool, start, end int64) (int64, bool) {
	switch {
	case accUnknown:
		return 0, false
	case down:
		return acc, accSeen
	case !bothOK || end < start:
		return 0, false
	}
	return acc + end - start, true
}
