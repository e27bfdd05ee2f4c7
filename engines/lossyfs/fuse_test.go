package lossyfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// requireFUSE skips a test that needs a real mount unless the machine can mount (root, /dev/fuse,
// fusermount3 from Debian's fuse3). In CI (CI=true) a missing prerequisite fails the test instead.
func requireFUSE(t testing.TB) {
	t.Helper()
	var missing string
	switch _, err := exec.LookPath("fusermount3"); {
	case os.Geteuid() != 0:
		missing = "root"
	case err != nil:
		missing = "fusermount3 (apt-get install fuse3)"
	default:
		if _, err := os.Stat("/dev/fuse"); err != nil {
			missing = "/dev/fuse"
		}
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("lossyfs tests need %s", missing)
	}
	t.Skipf("lossyfs tests need %s", missing)
}

// mountT mounts a fresh backing directory and unmounts it when the test ends, failed or not; a
// stuck mount would break every later test, so a lazy unmount is the fallback.
func mountT(t testing.TB, opts Options) (f *FS, backing, mnt string) {
	t.Helper()
	requireFUSE(t)
	backing, mnt = t.TempDir(), t.TempDir()
	f, err := Mount(backing, mnt, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
		}
	})
	return f, backing, mnt
}

// applyFS performs o on the mount the way a program would: open, act, close.
func applyFS(f *FS, mnt string, o op) error {
	p := filepath.Join(mnt, o.name)
	withFile := func(flags int, do func(*os.File) error) error {
		fd, err := os.OpenFile(p, flags, 0o644)
		if err != nil {
			return err
		}
		if err := do(fd); err != nil {
			fd.Close()
			return err
		}
		return fd.Close()
	}
	switch o.kind {
	case "create":
		return withFile(os.O_CREATE|os.O_WRONLY, func(*os.File) error { return nil })
	case "write":
		return withFile(os.O_WRONLY, func(fd *os.File) error { _, err := fd.WriteAt(o.payload(), o.off); return err })
	case "append":
		return withFile(os.O_WRONLY|os.O_APPEND, func(fd *os.File) error { _, err := fd.Write(o.payload()); return err })
	case "truncate":
		return os.Truncate(p, o.size)
	case "fsync":
		return withFile(os.O_RDONLY, func(fd *os.File) error { return fd.Sync() })
	case "fdatasync":
		return withFile(os.O_WRONLY, func(fd *os.File) error { return unix.Fdatasync(int(fd.Fd())) })
	case "rename":
		return os.Rename(p, filepath.Join(mnt, o.to))
	case "unlink":
		return os.Remove(p)
	case "sync":
		return f.Sync()
	case "cut":
		f.Cut()
		f.Recover()
		return nil
	}
	return fmt.Errorf("unknown op %q", o.kind)
}

// runOps applies ops to the mount and the model and checks the mount after every step.
func runOps(t *testing.T, f *FS, mnt string, ops []op) *model {
	t.Helper()
	m := newModel()
	if err := os.Mkdir(filepath.Join(mnt, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, o := range ops {
		if !applyModel(m, o) {
			continue
		}
		step := fmt.Sprintf("step %d (%v)", i, o)
		if err := applyFS(f, mnt, o); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		checkTree(t, mnt, m, step)
	}
	return m
}

func TestAgainstModel(t *testing.T) {
	w := func(name string, off, size int64, seed uint64) op {
		return op{kind: "write", name: name, off: off, size: size, seed: seed}
	}
	app := func(name string, size int64, seed uint64) op {
		return op{kind: "append", name: name, size: size, seed: seed}
	}
	create := op{kind: "create", name: "a"}
	fsync := op{kind: "fsync", name: "a"}
	cut := op{kind: "cut"}
	cases := []struct {
		name string
		ops  []op
	}{
		{"unsynced write is lost", []op{create, w("a", 0, 100, 1), cut}},
		{"fsynced write survives", []op{create, w("a", 0, 100, 1), fsync, w("a", 50, 100, 2), cut}},
		{"fdatasync is durable too", []op{create, app("a", 10, 1), {kind: "fdatasync", name: "a"}, cut}},
		{"appends after unsynced appends", []op{create, app("a", 10, 1), app("a", 10, 2), fsync, app("a", 5000, 3), app("a", 7, 4), cut}},
		{"overwrite across pages of synced data", []op{create, w("a", 0, 3*pageSize, 1), fsync, w("a", pageSize-10, 30, 2), cut}},
		{"shrink then regrow reads zeros", []op{create, w("a", 0, 2*pageSize, 1), fsync, {kind: "truncate", name: "a", size: 100}, {kind: "truncate", name: "a", size: 3 * pageSize}, fsync, cut}},
		{"shrink then regrow a dirty page reads zeros", []op{create, w("a", 0, 100, 1), {kind: "truncate", name: "a", size: 10}, {kind: "truncate", name: "a", size: 200}, fsync, cut}},
		{"unsynced shrink is undone", []op{create, w("a", 0, 5000, 1), fsync, {kind: "truncate", name: "a", size: 10}, cut}},
		{"hole past the end", []op{create, w("a", 3*pageSize+5, 10, 1), fsync, cut}},
		{"rename keeps synced data", []op{create, w("a", 0, 100, 1), fsync, w("a", 100, 100, 2), {kind: "rename", name: "a", to: "b"}, cut}},
		{"rename over a file", []op{create, {kind: "create", name: "b"}, w("b", 0, 10, 1), {kind: "fsync", name: "b"}, w("a", 0, 20, 2), {kind: "rename", name: "a", to: "b"}, {kind: "fsync", name: "b"}, cut}},
		{"unlink is durable", []op{create, w("a", 0, 100, 1), fsync, {kind: "unlink", name: "a"}, cut}},
		{"Sync syncs every file", []op{create, {kind: "create", name: "b"}, w("a", 0, 10, 1), w("b", 0, 10, 2), {kind: "sync"}, w("a", 0, 5, 3), cut}},
		{"two cuts", []op{create, w("a", 0, 10, 1), cut, w("a", 0, 10, 2), fsync, w("a", 5, 10, 3), cut}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, _, mnt := mountT(t, Options{NoBackingSync: true})
			runOps(t, f, mnt, c.ops)
		})
	}
}

func TestRandomAgainstModel(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			f, backing, mnt := mountT(t, Options{NoBackingSync: true})
			ops := randomOps(seed, 400)
			// End without a cut: a clean unmount writes everything back, as a shutdown would.
			ops = append(ops, w0("a", seed), w0("b", seed+1))
			m := runOps(t, f, mnt, ops)
			if err := f.Unmount(); err != nil {
				t.Fatal(err)
			}
			checkTree(t, backing, m, "after a clean unmount")
		})
	}
}

func w0(name string, seed uint64) op {
	return op{kind: "write", name: name, off: 10, size: 100, seed: seed}
}

// A cut while a program still holds the file open: its writes and syncs fail until recovery, and
// reads show the durable bytes.
func TestCutWithOpenFile(t *testing.T) {
	f, _, mnt := mountT(t, Options{})
	p := filepath.Join(mnt, "log")
	fd := openAppend(t, p)
	mustWrite(t, fd, "durable;")
	if err := fd.Sync(); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, fd, "lost;")
	f.Cut()
	if _, err := fd.Write([]byte("x")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write after cut: %v, want EIO", err)
	}
	if err := fd.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("fsync after cut: %v, want EIO", err)
	}
	if _, err := os.Create(filepath.Join(mnt, "new")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("create after cut: %v, want EIO", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "durable;" {
		t.Fatalf("after cut: %q", got)
	}
	// Through the descriptor opened before the cut too: the kernel's cached pages were invalidated.
	buf := make([]byte, 64)
	if n, _ := fd.ReadAt(buf, 0); string(buf[:n]) != "durable;" {
		t.Fatalf("after cut, through the open file: %q", buf[:n])
	}
	if fi, err := fd.Stat(); err != nil || fi.Size() != int64(len("durable;")) {
		t.Fatalf("after cut, stat: %v, %v", fi.Size(), err)
	}
	f.Recover()
	mustWrite(t, fd, "again;")
	if got, _ := os.ReadFile(p); string(got) != "durable;again;" {
		t.Fatalf("after recovery: %q", got)
	}
}

func TestFailWrites(t *testing.T) {
	f, _, mnt := mountT(t, Options{})
	p := filepath.Join(mnt, "log")
	fd := openAppend(t, p)
	mustWrite(t, fd, "before;")
	f.FailWrites(true)
	if _, err := fd.Write([]byte("x")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ENOSPC", err)
	}
	if _, err := os.Create(filepath.Join(mnt, "new")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("create on a full disk: %v, want ENOSPC", err)
	}
	if err := fd.Sync(); err != nil { // what was accepted can still be synced
		t.Fatalf("fsync on a full disk: %v", err)
	}
	f.FailWrites(false)
	mustWrite(t, fd, "after;")
	f.Cut()
	if got, _ := os.ReadFile(p); string(got) != "before;" {
		t.Fatalf("after cut: %q", got)
	}
}

// An I/O error is not a full disk: EIO at the point asked for, the other point unaffected, and
// data accepted before an fsync error stays unsynced (a cut drops it).
func TestFailIO(t *testing.T) {
	for _, tc := range []struct {
		name              string
		point             IOPoint
		writeErr, syncErr error
	}{
		{"write", IOWrite, syscall.EIO, nil},
		{"fsync", IOFsync, nil, syscall.EIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, mnt := mountT(t, Options{})
			p := filepath.Join(mnt, "log")
			fd := openAppend(t, p)
			mustWrite(t, fd, "before;")
			if err := fd.Sync(); err != nil {
				t.Fatal(err)
			}
			f.FailIO(tc.point)
			if st := f.Status(); st.FailIO != tc.point {
				t.Fatalf("status %+v, want FailIO %d", st, tc.point)
			}
			if _, err := fd.Write([]byte("x;")); !errors.Is(err, tc.writeErr) && !(err == nil && tc.writeErr == nil) {
				t.Fatalf("write: %v, want %v", err, tc.writeErr)
			}
			if err := fd.Sync(); !errors.Is(err, tc.syncErr) && !(err == nil && tc.syncErr == nil) {
				t.Fatalf("fsync: %v, want %v", err, tc.syncErr)
			}
			f.FailIO(IONone)
			f.Cut()
			// A failed write stored nothing; a write whose fsync failed was never durable.
			if got, _ := os.ReadFile(p); string(got) != "before;" {
				t.Fatalf("after cut: %q, want %q", got, "before;")
			}
		})
	}
}

// Closing persists nothing: after a SIGKILL the kernel closes the dead process's files, and that
// must not count as a sync. A directory fsync succeeds (Redis needs it to).
func TestCloseAndDirectoryFsync(t *testing.T) {
	f, backing, mnt := mountT(t, Options{})
	if err := os.WriteFile(filepath.Join(mnt, "f"), []byte("unsynced"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(backing, "f")); len(got) != 0 {
		t.Fatalf("backing has %q before any sync", got)
	}
	dir, err := os.Open(mnt)
	if err != nil {
		t.Fatal(err)
	}
	if err := dir.Sync(); err != nil {
		t.Fatalf("directory fsync: %v", err)
	}
	dir.Close()
	if st := f.Status(); st.DirtyFiles != 1 {
		t.Fatalf("status %+v, want 1 dirty file", st)
	}
	f.Cut()
	if got, _ := os.ReadFile(filepath.Join(mnt, "f")); len(got) != 0 {
		t.Fatalf("after cut: %q", got)
	}
}

// openAppend opens (creating it) file p for appending and reading, closed at the test's end.
func openAppend(t *testing.T, p string) *os.File {
	t.Helper()
	fd, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fd.Close() })
	return fd
}

func mustWrite(t *testing.T, fd *os.File, s string) {
	t.Helper()
	if _, err := fd.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// After a cut, unmounting writes nothing back, and a new mount of the same backing directory shows
// the durable state: the "reboot" way to recover.
func TestCutThenRemount(t *testing.T) {
	requireFUSE(t)
	backing, mnt := t.TempDir(), t.TempDir()
	f, err := Mount(backing, mnt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(mnt, "f")
	fd, err := os.Create(p)
	if err != nil {
		f.Unmount()
		t.Fatal(err)
	}
	mustWrite(t, fd, "kept;")
	fd.Sync()
	mustWrite(t, fd, "lost;")
	fd.Close()
	f.Cut()
	if err := f.Unmount(); err != nil {
		t.Fatal(err)
	}
	g, err := Mount(backing, mnt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
		}
	})
	if got, _ := os.ReadFile(p); string(got) != "kept;" {
		t.Fatalf("after remount: %q", got)
	}
	if err := os.WriteFile(p, []byte("new"), 0o644); err != nil { // the new mount is powered on
		t.Fatal(err)
	}
}

// Whole pages written and read through one descriptor sit in the kernel's page cache; a cut must
// invalidate them, or the reader would still see unsynced data.
func TestCutInvalidatesKernelCache(t *testing.T) {
	f, _, mnt := mountT(t, Options{})
	fd, err := os.OpenFile(filepath.Join(mnt, "f"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	page := bytes.Repeat([]byte("u"), 2*pageSize)
	if _, err := fd.WriteAt(page, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(page))
	if _, err := fd.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	f.Cut()
	n, _ := fd.ReadAt(buf, 0)
	fi, err := fd.Stat()
	if n != 0 || err != nil || fi.Size() != 0 {
		t.Fatalf("after cut: read %d bytes (%q...), size %d, %v", n, buf[:min(n, 8)], fi.Size(), err)
	}
}

// Writers, fsyncs, cuts and syncs at once: no deadlock, no data race (run with -race), and after a
// final cut every file holds exactly what its last successful fsync covered.
func TestConcurrentCuts(t *testing.T) {
	f, _, mnt := mountT(t, Options{NoBackingSync: true})
	const writers = 4
	synced := make([][]byte, writers) // what each writer's last successful fsync covered
	done := make(chan struct{})
	errs := make(chan error, writers)
	for w := range writers {
		// Created before any cut: a create while the power is off fails, by design.
		p := filepath.Join(mnt, fmt.Sprint("w", w))
		fd, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		go func() {
			var written []byte
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				rec := []byte(fmt.Sprintf("%d:%d;", w, i))
				if _, err := fd.Write(rec); err != nil {
					// Cut: the unsynced tail is gone. What is left is what this writer or a Sync
					// made durable; only this writer changes the file, so read it back.
					if written, err = os.ReadFile(p); err != nil {
						errs <- err
						return
					}
					continue
				}
				written = append(written, rec...)
				if i%5 != 0 {
					continue
				}
				if fd.Sync() == nil {
					synced[w] = bytes.Clone(written)
				} else if written, err = os.ReadFile(p); err != nil { // see above
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 30 {
		time.Sleep(2 * time.Millisecond)
		if i%3 == 0 {
			f.Sync()
		} else {
			f.Cut()
			f.Recover()
		}
	}
	f.Cut() // writers keep failing from here on: their last good fsync is final
	close(done)
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for w := range writers {
		got, err := os.ReadFile(filepath.Join(mnt, fmt.Sprint("w", w)))
		if err != nil {
			t.Fatal(err)
		}
		// A Sync may have made more durable than the writer's own fsyncs: the file must start
		// with what the writer saw synced.
		if !bytes.HasPrefix(got, synced[w]) {
			t.Fatalf("writer %d: file has %d bytes, not starting with its %d synced bytes", w, len(got), len(synced[w]))
		}
	}
}

// A cut that dropped data written through an open file makes the next fsync through it fail once,
// as Linux reports a lost writeback once per open file; a file opened afterwards is not told.
func TestFsyncReportsCutOnce(t *testing.T) {
	f, _, mnt := mountT(t, Options{})
	p := filepath.Join(mnt, "f")
	fd := openAppend(t, p)
	mustWrite(t, fd, "lost;")
	f.Cut()
	f.Recover()
	later, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer later.Close()
	mustWrite(t, fd, "kept;")
	if err := later.Sync(); err != nil {
		t.Fatalf("fsync through a file opened after the cut: %v", err)
	}
	if err := fd.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("first fsync after the cut: %v, want EIO", err)
	}
	if err := fd.Sync(); err != nil {
		t.Fatalf("second fsync after the cut: %v", err)
	}
	f.Cut()
	if got, _ := os.ReadFile(p); string(got) != "kept;" {
		t.Fatalf("after a second cut: %q", got)
	}
}
