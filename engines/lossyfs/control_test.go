package lossyfs

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
)

type fakeController struct {
	calls   []string
	syncErr error
}

func (f *fakeController) Cut()     { f.calls = append(f.calls, "cut") }
func (f *fakeController) Recover() { f.calls = append(f.calls, "recover") }
func (f *fakeController) Sync() error {
	f.calls = append(f.calls, "sync")
	return f.syncErr
}
func (f *fakeController) FailWrites(on bool) {
	f.calls = append(f.calls, map[bool]string{true: "full", false: "not full"}[on])
}
func (f *fakeController) FailIO(p IOPoint) { f.calls = append(f.calls, "io "+p.String()) }
func (f *fakeController) Status() Status   { return Status{Cut: true, DirtyFiles: 2, DirtyBytes: 8192} }

func TestControl(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := &fakeController{syncErr: errors.New("disk on fire")}
	go ServeControl(l, c)

	cases := []struct {
		cmd, detail, err string
	}{
		{CmdCut, "", ""},
		{CmdRecover, "", ""},
		{CmdSync, "", "lossyfs: disk on fire"},
		{CmdFailOn, "", ""},
		{CmdFailOff, "", ""},
		{CmdFailIO + " fsync", "", ""},
		{CmdFailIO + " write", "", ""},
		{CmdFailIO + " off", "", ""},
		{CmdFailIO + " read", "", `lossyfs: unknown command "fail-io read"`},
		{CmdStatus, "cut=true fail-writes=false fail-io=none dirty-files=2 dirty-bytes=8192", ""},
		{"format c:", "", `lossyfs: unknown command "format c:"`},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			detail, err := SendControl(sock, tc.cmd)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if detail != tc.detail || gotErr != tc.err {
				t.Fatalf("%q: got (%q, %q), want (%q, %q)", tc.cmd, detail, gotErr, tc.detail, tc.err)
			}
		})
	}
	want := []string{"cut", "recover", "sync", "full", "not full", "io fsync", "io write", "io none"}
	if len(c.calls) != len(want) {
		t.Fatalf("calls %v, want %v", c.calls, want)
	}
	for i := range want {
		if c.calls[i] != want[i] {
			t.Fatalf("calls %v, want %v", c.calls, want)
		}
	}
}

func TestControlPathIsStable(t *testing.T) {
	a, _ := ControlPath("/mnt/x/")
	b, _ := ControlPath("/mnt/x")
	c, _ := ControlPath("/mnt/y")
	if a != b || a == c {
		t.Fatalf("ControlPath: %q %q %q", a, b, c)
	}
}
