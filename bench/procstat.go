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
// engine per message. /proc has no fsync count; that figure stays unreported.
type procSample struct {
	pid                int
	cpuNs, rss, writeB int64
	ok                 bool
}

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

// engineProc reads the engine's server PID from its facts and samples it; a zero sample when the
// engine runs in qbench's own process (its cost is the generator's) or reports no PID.
func engineProc(ctx context.Context, eng engines.Engine) procSample {
	if ip, ok := eng.(engines.InProcess); ok && ip.InProcess() {
		return procSample{}
	}
	fr, ok := eng.(engines.FactReporter)
	if !ok {
		return procSample{}
	}
	fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	pid, err := strconv.Atoi(fr.Facts(fctx).Settings["pid"])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return procSample{}
	}
	return readProc(pid)
}

// procStats are the engine's own costs over the run, for Engine.Stats: CPU and bytes written
// between the two samples, resident memory at the end. A server restarted in between (a crash
// fault) is a different process; then only its memory is reported.
func procStats(start, end procSample) map[string]int64 {
	if !start.ok || !end.ok {
		return nil
	}
	out := map[string]int64{"proc_rss_bytes": end.rss}
	if start.pid == end.pid {
		out["proc_cpu_ns"] = end.cpuNs - start.cpuNs
		out["proc_write_bytes"] = end.writeB - start.writeB
	}
	return out
}
