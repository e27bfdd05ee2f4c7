package aof

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"qbench/engines/server/fsys"
)

// Layout is Redis 7's multi-part AOF: in DIR/appendonlydir, a manifest naming at most one base
// file (a snapshot of the keyspace) and the incremental files to replay after it, in order.
// The manifest is replaced atomically (temp file, fsync, rename, fsync of the directory).
type Layout struct {
	FS       fsys.FS
	Dir      string // the appendonlydir
	Prefix   string // appendfilename, "appendonly.aof"
	Base     string // "" = none
	BaseSeq  int
	Incrs    []string
	IncrSeqs []int
}

// DirName is the directory inside Redis's "dir" that holds the files.
const DirName = "appendonlydir"

// NewLayout describes the (possibly not yet existing) layout under dir.
func NewLayout(fs fsys.FS, dir, prefix string) *Layout {
	if prefix == "" {
		prefix = "appendonly.aof"
	}
	return &Layout{FS: fs, Dir: filepath.Join(dir, DirName), Prefix: prefix}
}

// ManifestPath is the manifest's path.
func (l *Layout) ManifestPath() string { return filepath.Join(l.Dir, l.Prefix+".manifest") }

// Path is a file's path in the layout.
func (l *Layout) Path(name string) string { return filepath.Join(l.Dir, name) }

// BaseName and IncrName name the files of sequence seq.
func (l *Layout) BaseName(seq int) string { return fmt.Sprintf("%s.%d.base.qaof", l.Prefix, seq) }
func (l *Layout) IncrName(seq int) string { return fmt.Sprintf("%s.%d.incr.qaof", l.Prefix, seq) }

// Load reads the manifest; it reports false if there is none.
func (l *Layout) Load() (bool, error) {
	b, err := l.FS.ReadFile(l.ManifestPath())
	if fsys.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	l.Base, l.BaseSeq, l.Incrs, l.IncrSeqs = "", 0, nil, nil
	sc := bufio.NewScanner(bytes.NewReader(b))
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		kv := map[string]string{}
		for i := 0; i+1 < len(f); i += 2 {
			kv[f[i]] = f[i+1]
		}
		name, typ := kv["file"], kv["type"]
		seq, err := strconv.Atoi(kv["seq"])
		if name == "" || err != nil || strings.ContainsAny(name, "/\\") {
			return false, fmt.Errorf("%s:%d: invalid manifest line %q", l.ManifestPath(), line, sc.Text())
		}
		switch typ {
		case "b":
			if l.Base != "" {
				return false, fmt.Errorf("%s:%d: more than one base file", l.ManifestPath(), line)
			}
			l.Base, l.BaseSeq = name, seq
		case "i":
			l.Incrs = append(l.Incrs, name)
			l.IncrSeqs = append(l.IncrSeqs, seq)
		case "h":
			// history: left over from a rewrite, not loaded
		default:
			return false, fmt.Errorf("%s:%d: unknown file type %q", l.ManifestPath(), line, typ)
		}
	}
	return true, nil
}

// Manifest renders the manifest's contents.
func (l *Layout) Manifest() []byte {
	var b bytes.Buffer
	if l.Base != "" {
		fmt.Fprintf(&b, "file %s seq %d type b\n", l.Base, l.BaseSeq)
	}
	for i, n := range l.Incrs {
		fmt.Fprintf(&b, "file %s seq %d type i\n", n, l.IncrSeqs[i])
	}
	return b.Bytes()
}

// Save writes the manifest atomically.
func (l *Layout) Save() error {
	if err := l.FS.MkdirAll(l.Dir); err != nil {
		return err
	}
	return fsys.WriteFileAtomic(l.FS, l.ManifestPath(), l.Manifest())
}

// NextSeq is the sequence number for a new incremental file.
func (l *Layout) NextSeq() int {
	n := 0
	for _, s := range l.IncrSeqs {
		n = max(n, s)
	}
	return n + 1
}

// Files are the files to load, in order: the base, then the incremental files.
func (l *Layout) Files() []string {
	var out []string
	if l.Base != "" {
		out = append(out, l.Base)
	}
	return append(out, l.Incrs...)
}

// Warning is something replay tolerated (a truncated final record).
type Warning struct {
	File      string
	Offset    int64 // where the valid data ends
	Discarded int64 // bytes dropped
	Reason    string
}

func (w Warning) String() string {
	if w.Reason == ZeroTail {
		// Zeros at a frame boundary hold no record: preallocated space (writer_prealloc.go),
		// or blocks a crash left unwritten. Say so rather than sound like lost data.
		return fmt.Sprintf("!!! Warning: the AOF file %s ends in %d zero bytes after its last record at offset %d: preallocated space, or blocks a crash left unwritten, holding no record; trimmed (aof-load-truncated)", w.File, w.Discarded, w.Offset)
	}
	return fmt.Sprintf("!!! Warning: short read while loading the AOF file %s!!! AOF loaded anyway because aof-load-truncated is enabled; %d bytes at offset %d discarded (%s)", w.File, w.Discarded, w.Offset, w.Reason)
}

// lastWithRecords is the index in files of the one the log ends in, the last holding records:
// files listed after it with no record (a rotation that failed after the manifest named the new
// file) do not make a truncated final record there a mid-log hole.
func (l *Layout) lastWithRecords(files []string) int {
	last := len(files) - 1
	for last > 0 {
		if size, err := l.FS.Size(l.Path(files[last])); err != nil || size > int64(len(Magic)) || files[last] == l.Base {
			break
		}
		last--
	}
	return last
}

// Orphans lists the log files in the directory named as this layout names them (PREFIX.N.base.qaof,
// PREFIX.N.incr.qaof), for a directory whose manifest is missing: start-up refuses to touch them
// (see NoManifestError). Sorted; none if the directory does not exist.
func (l *Layout) Orphans() ([]string, error) {
	names, err := l.FS.ReadDir(l.Dir)
	if fsys.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, l.Prefix+".")
		if !ok {
			continue
		}
		seq, kind, ok := strings.Cut(rest, ".")
		if _, err := strconv.Atoi(seq); ok && err == nil && (kind == "base.qaof" || kind == "incr.qaof") {
			out = append(out, n)
		}
	}
	return out, nil
}

// FromOrphans names in the layout the files a manifest would list, from the log files found
// without one (Orphans): the base of the highest sequence, and the incremental files from its
// sequence on (a rewrite at sequence N writes base N, a snapshot of everything before
// incremental file N), in order; every incremental file if there is no base. A suggestion to
// check and restore from, not proof: the manifest alone says which files are current.
func (l *Layout) FromOrphans(names []string) {
	l.Base, l.BaseSeq, l.Incrs, l.IncrSeqs = "", 0, nil, nil
	type file struct {
		name string
		seq  int
	}
	var incrs []file
	for _, n := range names {
		seqStr, kind, _ := strings.Cut(strings.TrimPrefix(n, l.Prefix+"."), ".")
		seq, _ := strconv.Atoi(seqStr)
		if kind == "base.qaof" {
			if l.Base == "" || seq > l.BaseSeq {
				l.Base, l.BaseSeq = n, seq
			}
		} else {
			incrs = append(incrs, file{n, seq})
		}
	}
	sort.Slice(incrs, func(i, j int) bool { return incrs[i].seq < incrs[j].seq })
	for _, f := range incrs {
		if l.Base == "" || f.seq >= l.BaseSeq {
			l.Incrs, l.IncrSeqs = append(l.Incrs, f.name), append(l.IncrSeqs, f.seq)
		}
	}
}

// NoManifestError: the directory holds log files but no manifest. Without it nobody can tell
// which files are current (a rewrite leaves the old ones until it has removed them), so loading
// could replay writes twice, and starting empty would write over them: start-up refuses.
type NoManifestError struct {
	Manifest string   // the missing manifest's path
	Files    []string // the log files found
}

func (e *NoManifestError) Error() string {
	return fmt.Sprintf("the AOF directory holds %s but no manifest %s: refusing to start, which would leave them unloaded and write over them; restore the manifest (one line per file to load, in order, e.g. \"file %s seq 1 type i\"; qbench aof check on the directory checks the files and suggests one), or move the files away to start empty",
		strings.Join(e.Files, ", "), e.Manifest, e.Files[len(e.Files)-1])
}

// MissingFileError: the manifest lists a file that does not exist. Redis 7 refuses to start
// ("If an AOF exists in the manifest but not on the disk, we consider this to be a fatal
// error"), as loading the rest would silently drop its writes. The server creates a file
// before the manifest names it, so this is damage, not a crash window.
type MissingFileError struct {
	File     string // as the manifest names it
	Manifest string
}

func (e *MissingFileError) Error() string {
	return fmt.Sprintf("Unable to obtain the AOF file %s length. stat: No such file or directory (the manifest %s lists it; restore it, or run qbench aof check)", e.File, e.Manifest)
}

// RecordError: a record that framed and decoded correctly but could not be applied (an unknown
// command, a nested transaction): the file and the record's byte offset, and why.
type RecordError struct {
	File   string
	Offset int64
	Err    error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s: record at byte offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Replay calls fn with every record of every file in order. A truncated final record of the
// last file holding records is dropped and reported as a warning (Redis's aof-load-truncated yes), and the file
// is cut there so new records follow a clean frame; any other damage is an error naming the
// file and byte offset, and nothing more is loaded. It returns the number of records.
func (l *Layout) Replay(fn func(r Record) error) (n int64, warns []Warning, err error) {
	files := l.Files()
	// Every listed file must exist before anything loads: a missing one otherwise made an
	// earlier file's preallocated zeros look like a mid-log hole, and the error blamed that file.
	for _, name := range files {
		if _, err := l.FS.Size(l.Path(name)); fsys.IsNotExist(err) {
			return 0, nil, &MissingFileError{File: name, Manifest: l.ManifestPath()}
		}
	}
	last := l.lastWithRecords(files)
	for i, name := range files {
		path := l.Path(name)
		data, err := l.FS.ReadFile(path)
		if err != nil {
			if fsys.IsNotExist(err) {
				return n, warns, &MissingFileError{File: name, Manifest: l.ManifestPath()}
			}
			return n, warns, err
		}
		if len(data) == 0 && name != l.Base {
			continue // a new incremental file, header not yet written
		}
		end, err := Scan(path, data, func(off int64, r Record) error {
			n++
			err := fn(r)
			if err != nil && err != ErrStop {
				return &RecordError{File: path, Offset: off, Err: err}
			}
			return err
		})
		if err != nil {
			fe, ok := err.(*FormatError)
			if ok && fe.Truncated && i == last {
				warns = append(warns, Warning{File: path, Offset: end, Discarded: int64(len(data)) - end, Reason: fe.Reason})
				if err := truncateFile(l.FS, path, end); err != nil {
					return n, warns, err
				}
				continue
			}
			return n, warns, err
		}
	}
	return n, warns, nil
}

// truncateFile cuts name to size and makes that durable.
func truncateFile(fs fsys.FS, name string, size int64) error {
	f, err := fs.OpenAppend(name)
	if err != nil {
		return err
	}
	if size < int64(len(Magic)) {
		size = 0
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// OpenIncr opens the listed incremental file name for appending (at start-up), writing the
// header if it has none. It returns the file and its size.
func (l *Layout) OpenIncr(name string) (fsys.File, int64, error) {
	return l.openIncr(name, false)
}

// CreateIncr creates the new incremental file name, empty but for its header, made durable
// with its directory entry before a manifest names it. A file of that name left by an earlier
// attempt that failed (a torn header after a full disk, or a header whose fsync failed and
// whose pages Linux dropped: later fsyncs would not write them) is started over.
func (l *Layout) CreateIncr(name string) (fsys.File, int64, error) {
	return l.openIncr(name, true)
}

func (l *Layout) openIncr(name string, fresh bool) (fsys.File, int64, error) {
	if err := l.FS.MkdirAll(l.Dir); err != nil {
		return nil, 0, err
	}
	path := l.Path(name)
	size, err := l.FS.Size(path)
	if err != nil && !fsys.IsNotExist(err) {
		return nil, 0, err
	}
	f, err := l.FS.OpenAppend(path)
	if err != nil {
		return nil, 0, err
	}
	if fresh || size < int64(len(Magic)) {
		fail := func(err error) (fsys.File, int64, error) {
			f.Truncate(0)
			f.Close()
			return nil, 0, err
		}
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, 0, err
		}
		if _, err := f.Write([]byte(Magic)); err != nil {
			return fail(err)
		}
		size = int64(len(Magic))
		if err := f.Sync(); err != nil {
			return fail(err)
		}
		if err := l.FS.SyncDir(l.Dir); err != nil {
			return fail(err)
		}
	}
	return f, size, nil
}
