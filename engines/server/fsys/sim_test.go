package fsys

import (
	"errors"
	"math/rand/v2"
	"syscall"
	"testing"
)

// TestSimPowerLoss: what survives a power cut is exactly what fsync and directory fsync made
// durable.
func TestSimPowerLoss(t *testing.T) {
	cases := []struct {
		name string
		do   func(s *Sim)
		want map[string]string // file -> contents after the cut; absent = gone
	}{
		{"unsynced file vanishes", func(s *Sim) {
			f, _ := s.Create("/d/a")
			f.Write([]byte("x"))
			f.Sync()
		}, map[string]string{}},
		{"synced data and entry survive", func(s *Sim) {
			f, _ := s.Create("/d/a")
			f.Write([]byte("hello"))
			f.Sync()
			s.SyncDir("/d")
			f.Write([]byte(" world"))
		}, map[string]string{"/d/a": "hello"}},
		{"atomic write", func(s *Sim) {
			s.WriteFile("/d/m", []byte("old"))
			f, _ := s.OpenAppend("/d/m")
			f.Sync()
			s.SyncDir("/d")
			WriteFileAtomic(s, "/d/m", []byte("new"))
		}, map[string]string{"/d/m": "new"}},
		{"rename without dir sync is undone", func(s *Sim) {
			f, _ := s.Create("/d/a")
			f.Write([]byte("A"))
			f.Sync()
			s.SyncDir("/d")
			s.Rename("/d/a", "/d/b")
		}, map[string]string{"/d/a": "A"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSim()
			s.MkdirAll("/d")
			tc.do(s)
			s.PowerLoss(false, nil)
			names, _ := s.ReadDir("/d")
			if len(names) != len(tc.want) {
				t.Fatalf("files after the cut: %v, want %v", names, tc.want)
			}
			for name, want := range tc.want {
				got, err := s.ReadFile(name)
				if err != nil || string(got) != want {
					t.Fatalf("%s = %q, %v; want %q", name, got, err, want)
				}
			}
		})
	}
}

func TestSimTornAndFaults(t *testing.T) {
	s := NewSim()
	s.MkdirAll("/d")
	f, _ := s.Create("/d/a")
	f.Write([]byte("0123"))
	f.Sync()
	s.SyncDir("/d")
	f.Write([]byte("456789"))
	s.PowerLoss(true, rand.New(rand.NewPCG(1, 1)))
	got, _ := s.ReadFile("/d/a")
	if len(got) < 4 || len(got) > 10 || string(got) != "0123456789"[:len(got)] {
		t.Fatalf("torn file = %q; want a prefix of 0123456789 at least 4 long", got)
	}

	f, _ = s.OpenAppend("/d/a")
	s.SetSpace(2)
	if n, err := f.Write([]byte("abcd")); n != 2 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk = %d, %v", n, err)
	}
	s.SetSpace(-1)
	s.FailSyncs(syscall.EIO)
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync = %v, want EIO", err)
	}
	s.FailSyncs(nil)
	s.FailWrites(syscall.EIO)
	if _, err := f.Write([]byte("x")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write = %v, want EIO", err)
	}
}

// TestSyncFailureDropsPages: Linux semantics of a failed fsync. The error is reported once,
// the next fsync returns nil, but the bytes whose writeback failed never reach the disk: after a
// power cut they read as zeros, while bytes written after the failure survive.
func TestSyncFailureDropsPages(t *testing.T) {
	s := NewSim()
	s.MkdirAll("/d")
	f, _ := s.Create("/d/f")
	s.SyncDir("/d")
	f.Write([]byte("aaaa"))
	f.Sync()
	f.Write([]byte("bbbb"))
	s.FailSyncOnce(syscall.EIO)
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("first sync after the failure: %v, want EIO", err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("second sync: %v, want nil (the error is reported once)", err)
	}
	if b, _ := s.ReadFile("/d/f"); string(b) != "aaaabbbb" {
		t.Fatalf("page cache = %q", b)
	}
	f.Write([]byte("cccc"))
	f.Sync()
	s.PowerLoss(false, nil)
	if b, _ := s.ReadFile("/d/f"); string(b) != "aaaa\x00\x00\x00\x00cccc" {
		t.Fatalf("after power loss = %q, want the dropped bytes as zeros", b)
	}
}
