package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"qbench/engines"
)

// procSample is what /proc says of the server process of an engine qbench started itself (its
// Facts report settings["pid"]): CPU, resident memory and bytes written, read when the producers
// start and when the consumers stop, so that the report can say what each policy costs the
// engine per message. /proc has no fsync count: fsyncs come from the engine's own counter when
// it keeps one (the in-repo server's aof_fsyncs, in its facts), in process too.
type procSample struct {
	pid                int
	cpuNs, rss, writeB int64
	ok                 bool
	fsyncs             int64
	fsyncsOK           bool
}

// fsyncFact is the engine's fact counting its fsyncs since its server started; statFsyncs is
// the run's share of them in Engine.Stats.
const (
	fsyncFact  = "aof_fsyncs"
	statFsyncs = "engine_fsyncs"
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
	return s
}

// procStats are the engine's own costs over the run, for Engine.Stats: CPU and bytes written
// between the two samples, resident memory at the end. A server restarted in between (a crash
// fault) is a different process; then only its memory is reported.
func procStats(start, end procSample) map[string]int64 {
	out := map[string]int64{}
	if start.ok && end.ok {
		out["proc_rss_bytes"] = end.rss
		if start.pid == end.pid {
			out["proc_cpu_ns"] = end.cpuNs - start.cpuNs
			out["proc_write_bytes"] = end.writeB - start.writeB
		}
	}
	// A counter that went back restarted with its server (or its log): the span's count is
	// unknown.
	if start.fsyncsOK && end.fsyncsOK && start.pid == end.pid && end.fsyncs >= start.fsyncs {
		out[statFsyncs] = end.fsyncs - start.fsyncs
	}
	return out
}
