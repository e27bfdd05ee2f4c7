package lossyfs

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// model is what a lossy file system must show: per name, the file's current bytes and the bytes
// that survive a cut. Names (metadata) are durable at once; data only when synced.
type model struct {
	files map[string]*modelFile
}

type modelFile struct{ data, synced []byte }

func newModel() *model { return &model{files: map[string]*modelFile{}} }

func (m *model) create(name string) {
	if m.files[name] == nil {
		m.files[name] = &modelFile{data: []byte{}, synced: []byte{}}
	}
}

func (m *model) write(name string, off int64, p []byte) {
	f := m.files[name]
	if end := off + int64(len(p)); end > int64(len(f.data)) {
		f.data = append(f.data, make([]byte, end-int64(len(f.data)))...)
	}
	copy(f.data[off:], p)
}

func (m *model) truncate(name string, size int64) {
	f := m.files[name]
	if size <= int64(len(f.data)) {
		f.data = f.data[:size:size]
	} else {
		f.data = append(f.data, make([]byte, size-int64(len(f.data)))...)
	}
}

func (m *model) sync(name string) { f := m.files[name]; f.synced = bytes.Clone(f.data) }

func (m *model) syncAll() {
	for name := range m.files {
		m.sync(name)
	}
}

func (m *model) rename(from, to string) {
	m.files[to] = m.files[from]
	delete(m.files, from)
}

func (m *model) unlink(name string) { delete(m.files, name) }

func (m *model) cut() {
	for _, f := range m.files {
		f.data = bytes.Clone(f.synced)
	}
}

// op is one step applied to both the file system under test and the model.
type op struct {
	kind string // create write append truncate fsync fdatasync rename unlink sync cut
	name string
	to   string // rename target
	off  int64
	size int64 // truncate size, or write length
	seed uint64
}

func (o op) String() string {
	switch o.kind {
	case "write":
		return fmt.Sprintf("write %s [%d,+%d)", o.name, o.off, o.size)
	case "append":
		return fmt.Sprintf("append %s +%d", o.name, o.size)
	case "truncate":
		return fmt.Sprintf("truncate %s %d", o.name, o.size)
	case "rename":
		return fmt.Sprintf("rename %s %s", o.name, o.to)
	}
	return o.kind + " " + o.name
}

// payload is the deterministic content of a write.
func (o op) payload() []byte {
	r := rand.New(rand.NewPCG(o.seed, 7))
	p := make([]byte, o.size)
	for i := range p {
		p[i] = byte('a' + r.IntN(26))
	}
	return p
}

// randomOps generates a fixed-seed sequence over a few names, with offsets and sizes that cross
// page boundaries, so partial pages, holes, shrinks and regrowths all occur.
func randomOps(seed uint64, n int) []op {
	r := rand.New(rand.NewPCG(seed, 1))
	names := []string{"a", "b", "c", "d/e"}
	var ops []op
	for i := range n {
		name := names[r.IntN(len(names))]
		o := op{name: name, seed: seed*1000 + uint64(i)}
		switch k := r.IntN(100); {
		case k < 10:
			o.kind = "create"
		case k < 40:
			o.kind, o.off, o.size = "write", r.Int64N(3*pageSize), 1+r.Int64N(2*pageSize)
		case k < 55:
			o.kind, o.size = "append", 1+r.Int64N(pageSize)
		case k < 70:
			o.kind, o.size = "truncate", r.Int64N(3*pageSize)
		case k < 77:
			o.kind = "fsync"
		case k < 81:
			o.kind = "fdatasync"
		case k < 87:
			o.kind, o.to = "rename", names[r.IntN(len(names))]
		case k < 91:
			o.kind = "unlink"
		case k < 93:
			o.kind = "sync"
		default:
			o.kind = "cut"
		}
		ops = append(ops, o)
	}
	return append(ops, op{kind: "cut"})
}

// applyModel applies o to the model, skipping what would fail on the file system (a file that does
// not exist). It reports whether the file system should be asked to do it.
func applyModel(m *model, o op) bool {
	exists := m.files[o.name] != nil
	switch o.kind {
	case "create":
		m.create(o.name)
	case "write":
		if !exists {
			return false
		}
		m.write(o.name, o.off, o.payload())
	case "append":
		if !exists {
			return false
		}
		m.write(o.name, int64(len(m.files[o.name].data)), o.payload())
	case "truncate":
		if !exists {
			return false
		}
		m.truncate(o.name, o.size)
	case "fsync", "fdatasync":
		if !exists {
			return false
		}
		m.sync(o.name)
	case "rename":
		if !exists || o.name == o.to {
			return false
		}
		m.rename(o.name, o.to)
	case "unlink":
		if !exists {
			return false
		}
		m.unlink(o.name)
	case "sync":
		m.syncAll()
	case "cut":
		m.cut()
	}
	return true
}

// checkTree compares every file under dir with the model's current bytes.
func checkTree(t *testing.T, dir string, m *model, step string) {
	t.Helper()
	var got []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got = append(got, rel)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: walk: %v", step, err)
	}
	want := slices.Sorted(maps.Keys(m.files))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: files %v, model has %v", step, got, want)
	}
	for _, name := range want {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: read %s: %v", step, name, err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: stat %s: %v", step, name, err)
		}
		wantData := m.files[name].data
		if !bytes.Equal(data, wantData) || fi.Size() != int64(len(wantData)) {
			t.Fatalf("%s: %s has %d bytes (stat %d), model %d; first difference at %d", step, name, len(data), fi.Size(), len(wantData), firstDiff(data, wantData))
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
