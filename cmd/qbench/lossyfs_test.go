package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLossyfsUsage(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"lossyfs", "fail-writes", "/mnt", "maybe"}, exitUsage, `want on or off`},
		{[]string{"lossyfs", "fail-io", "/mnt", "read"}, exitUsage, `want write, fsync or off`},
		{[]string{"lossyfs", "cut"}, exitUsage, "accepts 1 arg"},
		{[]string{"lossyfs", "cut", "--control", sock, "/mnt"}, exitRuntime, "is `qbench lossyfs mount` running?"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, stderr, code := qbench(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.msg) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, c.code, c.msg)
			}
		})
	}
}

// The whole by-hand flow: mount in the foreground, write, status, cut, recover, sync, Ctrl-C.
func TestLossyfsByHand(t *testing.T) {
	if _, err := exec.LookPath("fusermount3"); err != nil || os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root and fusermount3 (apt-get install fuse3)")
		}
		t.Skip("needs root and fusermount3 (apt-get install fuse3)")
	}
	backing, mnt := t.TempDir(), t.TempDir()
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	mount := exec.Command(qbenchBin, "lossyfs", "mount", "--control", sock, backing, mnt)
	var stderr strings.Builder
	mount.Stderr = &stderr
	if err := mount.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if mount.ProcessState == nil {
			mount.Process.Kill()
			mount.Wait()
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no control socket after 10 s; stderr: %s", stderr.String())
		}
	}
	ctl := func(args ...string) string {
		t.Helper()
		out, errOut, code := qbench(t, append([]string{"lossyfs", "--control", sock}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return strings.TrimSpace(out)
	}
	p := filepath.Join(mnt, "f")
	if err := os.WriteFile(p, []byte("synced"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctl("sync", mnt)
	if err := os.WriteFile(filepath.Join(mnt, "g"), []byte("unsynced"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ctl("status", mnt); got != "cut=false fail-writes=false fail-io=none dirty-files=1 dirty-bytes=4096" {
		t.Fatalf("status: %q", got)
	}
	ctl("cut", mnt)
	if got, _ := os.ReadFile(filepath.Join(mnt, "g")); len(got) != 0 {
		t.Fatalf("after cut: %q", got)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err == nil {
		t.Fatal("write after cut succeeded")
	}
	ctl("recover", mnt)
	ctl("fail-writes", mnt, "on")
	if err := os.WriteFile(filepath.Join(mnt, "h"), nil, 0o644); err == nil {
		t.Fatal("create on a full disk succeeded")
	}
	ctl("fail-writes", mnt, "off")
	ctl("fail-io", mnt, "write")
	if err := os.WriteFile(filepath.Join(mnt, "h"), nil, 0o644); err == nil {
		t.Fatal("create on a failing disk succeeded")
	}
	ctl("fail-io", mnt, "off")
	mount.Process.Signal(syscall.SIGINT)
	if err := mount.Wait(); err != nil {
		t.Fatalf("mount: %v; stderr: %s", err, stderr.String())
	}
	if got, _ := os.ReadFile(filepath.Join(backing, "f")); string(got) != "synced" {
		t.Fatalf("backing after unmount: %q", got)
	}
}
