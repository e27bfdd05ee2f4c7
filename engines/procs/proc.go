// Package procs starts real servers (a Kafka broker, redis-server, the in-repo server) as child
// processes for a run, and stops, crashes and restarts them by PID.
//
// Every child runs in its own process group, so stopping it also stops anything it forked, and
// gets SIGKILL from the kernel if the thread that started it dies (the benchmark or a test binary
// crashed), so no server outlives the process that started it.
package procs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Command says how to run a child process.
type Command struct {
	Path string
	Args []string
	Dir  string
	Env  []string // appended to the parent's environment
	// Log receives the child's stdout and stderr; it is created or appended to. Without it the
	// output is kept in memory (its last 64 KiB), for LogTail.
	Log string
	// Stdout, when set, receives the child's standard output instead (stderr still goes to the
	// log): a child that reports where it listens on stdout (the in-repo server) is read through
	// a pipe whose write end the caller passes here and closes after Start.
	Stdout *os.File
	// Stderr, when set, receives the child's standard error instead (the in-repo server child
	// logs to qbench's own stderr, as it would in process); LogTail then has only stdout's tail.
	Stderr *os.File
}

// Proc is a running child process.
type Proc struct {
	cmd  *exec.Cmd
	log  string
	mem  *tailBuffer // the output, when there is no log file
	done chan struct{}
	err  error // set before done is closed
	// exitedAt is when Wait returned; set before done is closed.
	exitedAt time.Time
}

// Start runs c. The process is not tied to ctx: it runs until Stop or Kill, or until the
// caller's process dies.
func Start(c Command) (*Proc, error) {
	var out *os.File
	if c.Log != "" {
		f, err := os.OpenFile(c.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		out = f
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	p := &Proc{cmd: cmd, log: c.Log, done: make(chan struct{})}
	if out != nil {
		cmd.Stdout, cmd.Stderr = out, out
	} else {
		p.mem = &tailBuffer{max: 64 << 10}
		cmd.Stdout, cmd.Stderr = p.mem, p.mem
	}
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	}
	if c.Stderr != nil {
		cmd.Stderr = c.Stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	// Pdeathsig fires when the *thread* that forked the child exits, not the process. Go may
	// retire idle threads, so the fork and the wait happen on one locked thread that lives
	// exactly as long as the child.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			if out != nil {
				out.Close()
			}
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		p.exitedAt = time.Now()
		if out != nil {
			out.Close()
		}
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("procs: start %s: %w", c.Path, err)
	}
	return p, nil
}

// PID is the child's process ID (also its process group ID).
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Done is closed when the child has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the child has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the child's exit status once Done is closed.
func (p *Proc) Err() error {
	<-p.done
	return p.err
}

// ExitedAt is when the child exited, once Done is closed.
func (p *Proc) ExitedAt() time.Time {
	<-p.done
	return p.exitedAt
}

// Kill sends SIGKILL to the child's process group and waits until the child is gone: a crash,
// with no chance to flush or close anything.
func (p *Proc) Kill() error {
	return p.signalAndWait(syscall.SIGKILL, 0)
}

// Stop sends SIGTERM to the process group, and SIGKILL if the child is still running after grace.
func (p *Proc) Stop(grace time.Duration) error {
	return p.signalAndWait(syscall.SIGTERM, grace)
}

func (p *Proc) signalAndWait(sig syscall.Signal, grace time.Duration) error {
	if p.Exited() {
		return nil
	}
	pgid := p.PID()
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("procs: signal %v to group %d: %w", sig, pgid, err)
	}
	if sig != syscall.SIGKILL {
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	// Kill the whole group even after the leader exited, so no grandchild survives.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	return nil
}

// LogTail returns the last n bytes of the child's log, for error messages.
func (p *Proc) LogTail(n int) string {
	if p.mem != nil {
		return p.mem.tail(n)
	}
	return tail(p.log, n)
}

// tailBuffer keeps the last max bytes written to it. exec copies the child's output into it from
// a goroutine of its own while LogTail may read, hence the lock.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

var _ io.Writer = (*tailBuffer)(nil)

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) tail(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.b
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

func tail(path string, n int) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// WaitReady calls probe every interval until it succeeds, ctx ends, or the child exits.
func (p *Proc) WaitReady(ctx context.Context, interval time.Duration, probe func(context.Context) error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last error
	for {
		if p.Exited() {
			return fmt.Errorf("procs: pid %d exited before it was ready (%v); log tail:\n%s", p.PID(), p.err, p.LogTail(2000))
		}
		if last = probe(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("procs: pid %d not ready: %w (last probe: %v)", p.PID(), ctx.Err(), last)
		case <-p.done:
		case <-t.C:
		}
	}
}

// FreePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment ago. Another
// process may take one before the child binds it; callers that care retry.
func FreePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("procs: free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Run starts c and waits for it to exit, killing it when ctx ends first. It returns the
// process (for its LogTail) and ctx's error or the exit error.
func Run(ctx context.Context, c Command) (*Proc, error) {
	p, err := Start(c)
	if err != nil {
		return nil, err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		_ = p.Kill()
		return p, ctx.Err()
	}
	return p, p.Err()
}
