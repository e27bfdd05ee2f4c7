package bench_test

import (
	"fmt"
	"testing"
	"time"
)

// A command fault's window lasts until the background work the command started (a log rewrite,
// a snapshot) is done, as INFO persistence tells, and a command that starts none is an instant,
// not a fault that never ended. The in-repo server counts its log's fsyncs into engine_fsyncs;
// redis-server counts none, so its run has no such figure.
func TestCommandFaultWindows(t *testing.T) {
	for _, c := range []struct {
		target, command string
		fsyncs          bool
	}{
		{"server", "BGREWRITEAOF", true},
		{"redis", "BGSAVE", false},
	} {
		t.Run(c.target, func(t *testing.T) {
			needTarget(t, c.target)
			res := run(t, scenario(t, fmt.Sprintf(`engine: %s
policy: aof-always
rate: 1000
duration: 1500ms
faults:
  - {at: 400ms, kind: command, command: [%s]}
  - {at: 900ms, kind: command, command: [CONFIG, SET, maxmemory-policy, noeviction]}
`, c.target, c.command)))
			if len(res.Faults) != 2 {
				t.Fatalf("%d fault windows, want 2: %+v", len(res.Faults), res.Faults)
			}
			bg, cfg := res.Faults[0], res.Faults[1]
			if bg.Error != "" || cfg.Error != "" {
				t.Fatalf("faults failed: %q, %q", bg.Error, cfg.Error)
			}
			if d := time.Duration(bg.EndNs - bg.StartNs); bg.Instant || d <= 0 || d > time.Second {
				t.Errorf("%s: instant %v, lasted %v: want the background work's time, above 0 and within the run", c.command, bg.Instant, d)
			}
			if !cfg.Instant || cfg.EndNs != cfg.StartNs {
				t.Errorf("CONFIG SET: instant %v, lasted %v: want an instant", cfg.Instant, time.Duration(cfg.EndNs-cfg.StartNs))
			}
			n, ok := res.Engine.Stats["engine_fsyncs"]
			if ok != c.fsyncs {
				t.Fatalf("engine_fsyncs reported %v (%d), want %v (stats %v)", ok, n, c.fsyncs, res.Engine.Stats)
			}
			// appendfsync always: at least one fsync, and at most one for each logged command a
			// message costs (XADD, the XREADGROUP that delivers it, XACK) and a little more.
			if ok && (n < 1 || n > 4*res.Summary.Ledger.Acked) {
				t.Errorf("engine_fsyncs %d for %d acknowledged messages", n, res.Summary.Ledger.Acked)
			}
			// A log rewritten during the run: its growth is not what the engine appended, and
			// says so; a snapshot leaves the log's growth standing.
			_, logKnown := res.Engine.Stats["engine_log_bytes"]
			if rewrote := c.command == "BGREWRITEAOF"; logKnown == rewrote || (res.Engine.Stats["engine_log_unknown"] == 1) != rewrote {
				t.Errorf("%s: log bytes known %v, engine_log_unknown %d (stats %v)", c.command, logKnown, res.Engine.Stats["engine_log_unknown"], res.Engine.Stats)
			}
			t.Logf("%s lasted %v; engine_fsyncs %d for %d acked", c.command, time.Duration(bg.EndNs-bg.StartNs), n, res.Summary.Ledger.Acked)
		})
	}
}
