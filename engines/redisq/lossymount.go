package redisq

import (
	"errors"
	"fmt"

	"qbench/engines/lossyfs"
)

// lossyMount is the power-loss file system mounted over a backing directory under base.
type lossyMount struct {
	base string // holds backing/ and mnt/
	dir  string // the mount point: the server's data directory
	fs   *lossyfs.FS
}

func mountLossy(base string) (*lossyMount, error) {
	fs, mnt, err := lossyfs.MountUnder(base, "mnt")
	if err != nil {
		return nil, err
	}
	return &lossyMount{base: base, dir: mnt, fs: fs}, nil
}

// powerCut drops every unsynced byte and turns the power back on, ready for a restart.
func (m *lossyMount) powerCut() {
	m.fs.Cut()
	m.fs.Recover()
}

func (m *lossyMount) diskFull(full bool) { m.fs.FailWrites(full) }

// ioError makes the directory fail with EIO at point (write, fsync; "" for none).
func (m *lossyMount) ioError(point string) error {
	p, err := ioPoint(point)
	if err == nil {
		m.fs.FailIO(p)
	}
	return err
}

// ioPoint maps an io-error fault's point onto lossyfs's.
func ioPoint(point string) (lossyfs.IOPoint, error) {
	switch point {
	case "":
		return lossyfs.IONone, nil
	case "write":
		return lossyfs.IOWrite, nil
	case "fsync":
		return lossyfs.IOFsync, nil
	}
	return lossyfs.IONone, fmt.Errorf("io-error point %q: want write or fsync", point)
}

func (m *lossyMount) unmount() error { return errors.Join(m.fs.Unmount()) }
