package redisq

import (
	"strings"
	"sync"

	"qbench/engines"
	"qbench/engines/procs"
)

// deathLines is how many of a dead server's last log lines a result keeps: enough for Redis's
// reason and the line before it.
const deathLines = 5

// deathOf reports p's death when it exited on its own: a process killed by a fault or stopped
// is no longer p (its owner forgets it), so an exited p is one nobody ended. The owner keeps the
// first death across a restart (a supervisor's, restart_after).
func deathOf(p *procs.Proc, log string) (engines.Death, bool) {
	if p == nil || !p.Exited() {
		return engines.Death{}, false
	}
	status := "exit status 0"
	if err := p.Err(); err != nil {
		status = err.Error()
	}
	return engines.Death{At: p.ExitedAt(), Status: status, Log: lastLines(log, deathLines), Down: true}, true
}

// lastLines is the last n non-empty lines of s.
func lastLines(s string, n int) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// Died reports whether redis-server exited on its own, with its exit status and last log lines
// (engines.DeathReporter).
func (m *ManagedRedis) Died() (engines.Death, bool) {
	if m.death != nil {
		d := *m.death
		d.Down = m.proc() == nil || m.proc().Exited()
		return d, true
	}
	if m.proc() == nil {
		return engines.Death{}, false
	}
	return deathOf(m.proc(), m.proc().LogTail(4096))
}

// Died reports redis-server's own exit (engines.DeathReporter).
func (e *managedEngine) Died() (engines.Death, bool) { return e.server.Died() }

// Died reports redis-server's own exit (engines.DeathReporter).
func (e *lossyEngine) Died() (engines.Death, bool) { return e.server.Died() }

// Died reports the child server's own exit (engines.DeathReporter).
func (e *childEngine) Died() (engines.Death, bool) {
	if e.child.death != nil {
		d := *e.child.death
		d.Down = e.child.proc() == nil || e.child.proc().Exited()
		return d, true
	}
	if e.child.proc() == nil {
		return engines.Death{}, false
	}
	return deathOf(e.child.proc(), e.child.stderr.String())
}

// stderrTail keeps the last bytes of the child server's standard error, which is also copied to
// qbench's own, so that a death can be reported with the server's last words.
type stderrTail struct {
	mu sync.Mutex
	b  []byte
}

const stderrTailMax = 8 << 10

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - stderrTailMax; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
