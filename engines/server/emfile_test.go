package server

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// childHogEnv makes the child server (runChildServer) log to stderr and, once started, take
// every free descriptor but five, as other open files would.
const childHogEnv = "QBENCH_SERVER_CHILD_HOG_FDS"

func hogFDs(spare int) {
	var held []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		held = append(held, f)
	}
	for _, f := range held[len(held)-min(spare, len(held)):] {
		f.Close()
	}
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
func (w *syncBuffer) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.b.String() }

// TestEMFILE: a server started under `ulimit -n 64` with the default maxclients (10000)
// lowers maxclients to fit, as Redis does, with Redis's log lines; and when accept fails with
// "too many open files" it backs off and accepts again once clients leave. (The accept loop
// used to exit on the first EMFILE: after every client left, new ones waited forever.)
func TestEMFILE(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	cmd := exec.Command("sh", "-c", `ulimit -n 64 && exec "$0" -test.run='^$'`, os.Args[0])
	cmd.Env = append(os.Environ(), childServerEnv+"=1", childHogEnv+"=1")
	dieWithParent(cmd)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child server: %v; stderr:\n%s", err, stderr.String())
	}
	addr := strings.TrimSpace(line)
	for _, want := range []string{
		"You requested maxclients of 10000 requiring at least 10032 max file descriptors.",
		"Current maximum open files is 64. maxclients has been reduced to 32 to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
	} {
		// The log goes to stderr, which os/exec copies on a goroutine of its own: it may land
		// after the address on stdout, so wait for it a little.
		deadline := time.Now().Add(3 * time.Second)
		for !strings.Contains(stderr.String(), want) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, stderr.String())
		}
	}
	// Twelve clients: five fit in the descriptors left, then accept fails with EMFILE.
	var conns []net.Conn
	for i := 0; i < 12; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "too many open files") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "Accepting client connection: ") {
		t.Errorf("no accept error logged:\n%s", stderr.String())
	}
	for _, nc := range conns {
		nc.Close()
	}
	// Once they are gone, a new client is served.
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprint(nc, "CONFIG GET maxclients\r\n")
	br := bufio.NewReader(nc)
	var got []string
	for i := 0; i < 5; i++ {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("a client after the others left got no reply (%v); the accept loop is dead?\nstderr:\n%s", err, stderr.String())
		}
		got = append(got, strings.TrimSpace(l))
	}
	if strings.Join(got, " ") != "*2 $10 maxclients $2 32" {
		t.Fatalf("CONFIG GET maxclients = %q", got)
	}
}
