package aof

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// FileReport is the state of one file of a layout.
type FileReport struct {
	File     string
	Size     int64
	Records  int64        // valid records before any damage
	ValidEnd int64        // offset just past the last valid record
	Damage   *FormatError // nil if the file is sound
	// ZeroBytes is the zero-filled tail after the last record of the file the log ends in:
	// preallocated space (writer_prealloc.go) or blocks a crash left unwritten. It holds no
	// record and replay trims it, so it is not damage.
	ZeroBytes int64
	// Recoverable counts valid-looking frames after the damage (found by searching for the next
	// frame with good checksums): what a fix at ValidEnd discards, at least.
	Recoverable int64
}

// Check reads every file of the layout and reports where each is damaged.
func Check(l *Layout) ([]FileReport, error) {
	ok, err := l.Load()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: no manifest", l.ManifestPath())
	}
	return CheckFiles(l)
}

// CheckFiles is Check of the files the layout names now, without reading a manifest (for a
// layout from FromOrphans).
func CheckFiles(l *Layout) ([]FileReport, error) {
	var out []FileReport
	files := l.Files()
	last := l.lastWithRecords(files)
	for i, name := range files {
		path := l.Path(name)
		data, err := l.FS.ReadFile(path)
		if err != nil {
			return out, err
		}
		rep := FileReport{File: path, Size: int64(len(data))}
		end, err := Scan(path, data, func(int64, Record) error { rep.Records++; return nil })
		rep.ValidEnd = end
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				return out, err
			}
			if fe.Reason == ZeroTail && i == last {
				rep.ZeroBytes = rep.Size - end
			} else {
				rep.Damage = fe
				rep.Recoverable = countFrames(data, int(end)+1)
			}
		}
		out = append(out, rep)
	}
	return out, nil
}

// countFrames counts the valid frames found after from, searching byte by byte for a header
// whose checksums hold and then hopping frame to frame.
func countFrames(data []byte, from int) int64 {
	var n int64
	for off := max(from, len(Magic)); off+HeaderLen <= len(data); {
		h := data[off:]
		l := int(binary.LittleEndian.Uint32(h))
		if crc32.Checksum(h[:8], castagnoli) == binary.LittleEndian.Uint32(h[8:]) && l > 0 && l <= len(h)-HeaderLen &&
			crc32.Checksum(h[HeaderLen:HeaderLen+l], castagnoli) == binary.LittleEndian.Uint32(h[4:]) {
			n++
			off += HeaderLen + l
			continue
		}
		off++
	}
	return n
}

// FixReport says what Fix did.
type FixReport struct {
	File              string // the damaged file, cut at Offset
	Offset            int64
	Backups           []string
	DiscardedBytes    int64
	DiscardedRecords  int64 // valid records found after the damage, and in dropped later files
	DroppedLaterFiles []string
}

// Fix truncates the first damaged file at its last valid record after copying it to a backup
// (name.bak, name.bak.1, ...). Incremental files after it can no longer be replayed on top of
// the gap, so they are backed up and dropped from the manifest. It returns nil, nil when
// nothing is damaged.
func Fix(l *Layout) (*FixReport, error) {
	reps, err := Check(l)
	if err != nil {
		return nil, err
	}
	for i, r := range reps {
		if r.Damage == nil {
			continue
		}
		fr := &FixReport{File: r.File, Offset: r.ValidEnd, DiscardedBytes: r.Size - r.ValidEnd, DiscardedRecords: r.Recoverable}
		if r.Damage.Reason != ZeroTail {
			fr.DiscardedRecords++ // the damaged record itself
		}
		bak, err := backup(l, r.File)
		if err != nil {
			return nil, err
		}
		fr.Backups = append(fr.Backups, bak)
		for _, later := range reps[i+1:] {
			bak, err := backup(l, later.File)
			if err != nil {
				return nil, err
			}
			fr.Backups = append(fr.Backups, bak)
			fr.DroppedLaterFiles = append(fr.DroppedLaterFiles, later.File)
			fr.DiscardedRecords += later.Records + later.Recoverable
		}
		if err := truncateFile(l.FS, r.File, r.ValidEnd); err != nil {
			return nil, err
		}
		if len(fr.DroppedLaterFiles) > 0 {
			keep := len(l.Incrs) - len(fr.DroppedLaterFiles)
			l.Incrs, l.IncrSeqs = l.Incrs[:keep], l.IncrSeqs[:keep]
			if err := l.Save(); err != nil {
				return nil, err
			}
		}
		return fr, nil
	}
	return nil, nil
}

func backup(l *Layout, path string) (string, error) {
	data, err := l.FS.ReadFile(path)
	if err != nil {
		return "", err
	}
	name := path + ".bak"
	for i := 1; ; i++ {
		if _, err := l.FS.Size(name); err != nil {
			break
		}
		name = fmt.Sprintf("%s.bak.%d", path, i)
	}
	f, err := l.FS.Create(name)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", err
	}
	return name, f.Close()
}
