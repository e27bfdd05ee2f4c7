package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/results"
)

var qbenchBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "qbench-bin-")
	if err != nil {
		panic(err)
	}
	qbenchBin = filepath.Join(dir, "qbench")
	if out, err := exec.Command("go", "build", "-o", qbenchBin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// qbench runs the binary and returns stdout, stderr and the exit code.
func qbench(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(qbenchBin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// validateCase is a scenario for qbench validate, the exit code it should give and a part of
// the error it should print (empty: anything).
type validateCase struct {
	name, yaml string
	wantCode   int
	wantErr    string
}

// validateEach runs qbench validate on each case's scenario, a subtest each.
func validateEach(t *testing.T, cases []validateCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := qbench(t, "validate", writeFile(t, "s.yaml", c.yaml))
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.wantCode, stderr)
			}
			if !strings.Contains(stderr, c.wantErr) {
				t.Fatalf("stderr lacks %q:\n%s", c.wantErr, stderr)
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	bad := writeFile(t, "bad.yaml", "name: x\nrate: 10\nproducers: -2\n")
	unknownDesign := writeFile(t, "d.yaml", "name: x\nrate: 10\ndesign: carrier-pigeon\n")
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"validate a good file", []string{"validate", "../../scenarios/quickstart.yaml"}, 0, ""},
		{"validate a bad file", []string{"validate", bad}, 2, "bad.yaml:3: producers: must be at least 1"},
		{"unknown design", []string{"validate", unknownDesign}, 2, "d.yaml:3: design: engine embedded has no design \"carrier-pigeon\""},
		{"run a bad file", []string{"run", bad}, 2, "bad.yaml:3: producers"},
		{"missing file", []string{"run", "/nonexistent.yaml"}, 2, "no such file"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"unknown flag", []string{"run", "--frob", "x.yaml"}, 2, "unknown flag"},
		{"missing argument", []string{"run"}, 2, "accepts 1 arg"},
		{"engines lists the registry", []string{"engines"}, 0, ""},
		{"unwritable output, checked before the run", []string{"run", "../../scenarios/quickstart.yaml", "-o", "/nonexistent/x.json"}, 2, "-o /nonexistent/x.json: cannot write the result there"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := qbench(t, c.args...)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.wantCode, stderr)
			}
			if !strings.Contains(stderr, c.wantStderr) {
				t.Fatalf("stderr %q does not contain %q", stderr, c.wantStderr)
			}
		})
	}
}

// The first Ctrl-C stops the load and still writes a result, marked interrupted.
func TestInterruptStillWritesResults(t *testing.T) {
	sc := writeFile(t, "long.yaml", "name: long\nrate: 500\nduration: 60s\n")
	out := filepath.Join(t.TempDir(), "result.json")
	cmd := exec.Command(qbenchBin, "run", "-q", sc, "-o", out)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // let the run get going; the assertion does not depend on it
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		// An interrupted run has its own exit code, so CI can tell it from a full run.
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 4 {
			t.Fatalf("exit: %v, want exit code 4 (interrupted)", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("qbench did not stop within 20 s of Ctrl-C")
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Summary.Ledger.Acked == 0 || res.Summary.Ledger.Lost != 0 {
		t.Fatalf("interrupted %v, ledger %+v", res.Interrupted, res.Summary.Ledger)
	}
	if !strings.Contains(stdout.String(), "INTERRUPTED") {
		t.Fatalf("summary does not say the run was interrupted:\n%s", stdout.String())
	}
}

// qbench serve answers real clients; the address it prints on stdout is where it listens.
func TestServeAnswersRedisClients(t *testing.T) {
	cmd := exec.Command(qbenchBin, "serve", "--port", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr = strings.TrimSpace(addr)
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("serve listens on %q, want loopback", addr)
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []any{"f", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.XLen(ctx, "s").Result(); err != nil || n != 1 {
		t.Fatalf("XLEN = %d, %v", n, err)
	}
}

// qbench serve takes the password from a file or the environment, so it stays out of ps, and
// says so in --help.
func TestServePasswordOutOfPs(t *testing.T) {
	const pass = "hunter2-secret"
	file := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(file, []byte(pass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	help, _ := exec.Command(qbenchBin, "serve", "--help").CombinedOutput()
	for _, want := range []string{"--requirepass-file", "QBENCH_REQUIREPASS", "protected mode"} {
		if !strings.Contains(string(help), want) {
			t.Errorf("serve --help does not mention %q:\n%s", want, help)
		}
	}
	for _, how := range []string{"file", "env"} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(qbenchBin, "serve", "--port", "0")
			if how == "file" {
				cmd.Args = append(cmd.Args, "--requirepass-file", file)
			} else {
				cmd.Env = append(os.Environ(), "QBENCH_REQUIREPASS="+pass)
			}
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
			addr, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid)); err == nil && strings.Contains(string(b), pass) {
				t.Fatalf("the password shows in the command line: %q", b)
			}
			ctx := context.Background()
			c := redis.NewClient(&redis.Options{Addr: strings.TrimSpace(addr)})
			defer c.Close()
			if err := c.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
				t.Fatalf("PING without AUTH = %v, want NOAUTH", err)
			}
			c2 := redis.NewClient(&redis.Options{Addr: strings.TrimSpace(addr), Password: pass})
			defer c2.Close()
			if err := c2.Ping(ctx).Err(); err != nil {
				t.Fatalf("PING with the password: %v", err)
			}
		})
	}
}

// startQbench starts the binary in the background: its stderr, and a channel with its exit.
// The process is killed when the test ends, if it still runs.
func startQbench(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(qbenchBin, args...)
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, stderr, done
}
