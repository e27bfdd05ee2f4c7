package lossyfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// The page logic on its own, without FUSE (runs everywhere): random writes, truncates, syncs and
// cuts on one file against the model, reading everything back after each step.
func TestFileStateAgainstModel(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 2))
		p := filepath.Join(t.TempDir(), "f")
		initial := bytes.Repeat([]byte("0123456789"), 1000)
		if err := os.WriteFile(p, initial, 0o644); err != nil {
			t.Fatal(err)
		}
		fd, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newFileState(fd)
		if err != nil {
			t.Fatal(err)
		}
		m := &modelFile{data: bytes.Clone(initial), synced: bytes.Clone(initial)}
		for i := range 500 {
			var what string
			switch k := r.IntN(10); {
			case k < 5:
				o := op{off: r.Int64N(4 * pageSize), size: 1 + r.Int64N(2*pageSize), seed: seed*1000 + uint64(i)}
				what = o.String()
				if _, err := s.writeAt(o.payload(), o.off); err != nil {
					t.Fatal(err)
				}
				mm := &model{files: map[string]*modelFile{"": m}}
				mm.write("", o.off, o.payload())
			case k < 8:
				n := r.Int64N(4 * pageSize)
				what = "truncate"
				s.truncate(n)
				(&model{files: map[string]*modelFile{"": m}}).truncate("", n)
			case k < 9:
				what = "sync"
				if _, err := s.sync(); err != nil {
					t.Fatal(err)
				}
				m.synced = bytes.Clone(m.data)
				if got, _ := os.ReadFile(p); !bytes.Equal(got, m.data) {
					t.Fatalf("seed %d step %d: backing file differs from the model after sync", seed, i)
				}
			default:
				what = "cut"
				s.drop()
				m.data = bytes.Clone(m.synced)
			}
			got := make([]byte, s.size+10)
			n, err := s.readAt(got, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[:n], m.data) {
				t.Fatalf("seed %d step %d (%s): read %d bytes, model %d; first difference at %d", seed, i, what, n, len(m.data), firstDiff(got[:n], m.data))
			}
		}
		fd.Close()
	}
}
