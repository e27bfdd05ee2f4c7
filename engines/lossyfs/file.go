package lossyfs

import (
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"sync"
	"syscall"
)

// pageSize is the unit in which unsynced data is held. A write into a page that is not yet dirty
// first copies the page's durable bytes, so a page always holds the file's full logical content.
const pageSize = 4096

// fileState is one backing file's logical content: its durable bytes (the backing file as of the
// last sync) overlaid with dirty pages and a logical size. It is keyed by the backing inode and owns
// an open descriptor of it, so a rename or unlink of the name does not lose it and the inode number
// cannot be reused while the state exists.
//
// Invariants: truncLow <= size; truncLow <= durable; bytes of a dirty page at or past size are zero.
// Backing bytes at or past min(truncLow, durable) are stale (cut off by a truncate) and read as zeros.
type fileState struct {
	fd *os.File

	mu sync.Mutex // guards the fields below refs; FS.mu, if needed too, is locked first

	// Guarded by FS.mu.
	refs int

	size     int64            // logical size
	durable  int64            // backing size after the last sync
	truncLow int64            // lowest size set since the last sync
	pages    map[int64][]byte // dirty pages by page index
	cuts     uint64           // cuts that dropped data of this file: an fsync through a handle opened before one fails once, as Linux reports a lost writeback
}

func newFileState(fd *os.File) (*fileState, error) {
	fi, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	n := fi.Size()
	return &fileState{fd: fd, size: n, durable: n, truncLow: n, pages: map[int64][]byte{}}, nil
}

// dirty reports whether anything would be lost by a cut.
func (s *fileState) dirty() bool {
	return len(s.pages) > 0 || s.size != s.durable || s.truncLow != s.durable
}

// dirtyBytes is the amount of unsynced page data, for status reports.
func (s *fileState) dirtyBytes() int64 { return int64(len(s.pages)) * pageSize }

// readBacking fills d with the durable bytes at pos, zeros past limit.
func (s *fileState) readBacking(d []byte, pos, limit int64) error {
	clear(d)
	if pos >= limit {
		return nil
	}
	m := min(int64(len(d)), limit-pos)
	_, err := s.fd.ReadAt(d[:m], pos)
	if errors.Is(err, io.EOF) { // the backing file shrank behind our back: zeros
		err = nil
	}
	return err
}

func (s *fileState) limit() int64 { return min(s.truncLow, s.durable) }

func (s *fileState) readAt(dest []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, nil
	}
	n := min(int64(len(dest)), s.size-off)
	dest = dest[:n]
	if len(s.pages) == 0 {
		return int(n), s.readBacking(dest, off, s.limit())
	}
	for done := int64(0); done < n; {
		pos := off + done
		p, in := pos/pageSize, pos%pageSize
		chunk := min(pageSize-in, n-done)
		d := dest[done : done+chunk]
		if pg, ok := s.pages[p]; ok {
			copy(d, pg[in:])
		} else if err := s.readBacking(d, pos, s.limit()); err != nil {
			return 0, err
		}
		done += chunk
	}
	return int(n), nil
}

// page returns dirty page p, loading it from the durable bytes first.
func (s *fileState) page(p int64) ([]byte, error) {
	if pg, ok := s.pages[p]; ok {
		return pg, nil
	}
	pg := make([]byte, pageSize)
	if err := s.readBacking(pg, p*pageSize, s.limit()); err != nil {
		return nil, err
	}
	s.pages[p] = pg
	return pg, nil
}

func (s *fileState) writeAt(data []byte, off int64) (int, error) {
	n := int64(len(data))
	for done := int64(0); done < n; {
		pos := off + done
		p, in := pos/pageSize, pos%pageSize
		chunk := min(pageSize-in, n-done)
		pg, err := s.page(p)
		if err != nil {
			return int(done), err
		}
		copy(pg[in:], data[done:done+chunk])
		done += chunk
	}
	s.size = max(s.size, off+n)
	return int(n), nil
}

func (s *fileState) truncate(n int64) {
	if n < s.size {
		for p := range s.pages {
			if p*pageSize >= n {
				delete(s.pages, p)
			}
		}
		if pg, ok := s.pages[n/pageSize]; ok {
			clear(pg[n%pageSize:])
		}
		s.truncLow = min(s.truncLow, n)
	}
	s.size = n
}

// sync writes the dirty pages and the logical size to the backing file; from then on they survive
// a cut. It reports whether anything was written (and so whether the backing file needs an
// fdatasync, which the caller does without holding mu: see FS.syncState).
func (s *fileState) sync() (bool, error) {
	if !s.dirty() {
		return false, nil
	}
	if s.truncLow < s.durable {
		if err := s.fd.Truncate(s.truncLow); err != nil {
			return false, err
		}
	}
	backingSize := s.limit()
	for _, p := range slices.Sorted(maps.Keys(s.pages)) {
		end := min((p+1)*pageSize, s.size)
		if _, err := s.fd.WriteAt(s.pages[p][:end-p*pageSize], p*pageSize); err != nil {
			return false, err
		}
		backingSize = max(backingSize, end)
	}
	if backingSize != s.size {
		if err := s.fd.Truncate(s.size); err != nil {
			return false, err
		}
	}
	s.durable, s.truncLow = s.size, s.size
	clear(s.pages)
	return true, nil
}

// drop forgets everything unsynced: the power cut.
func (s *fileState) drop() {
	if s.dirty() {
		s.cuts++
	}
	clear(s.pages)
	s.size, s.truncLow = s.durable, s.durable
}

// orphan reports whether the backing file has no names left.
func (s *fileState) orphan() bool {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(s.fd.Fd()), &st); err != nil {
		return false
	}
	return st.Nlink == 0
}
