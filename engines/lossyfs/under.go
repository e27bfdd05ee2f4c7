package lossyfs

import (
	"errors"
	"os"
	"path/filepath"
)

// MountUnder is how qbench's engines mount lossyfs for a server: it creates base/backing and
// base/name and mounts, with default options, the first at the second, which it returns as the
// server's data directory. Keeping both under one base lets the caller remove everything with
// os.RemoveAll(base) after Unmount.
func MountUnder(base, name string) (*FS, string, error) {
	backing, mnt := filepath.Join(base, "backing"), filepath.Join(base, name)
	if err := errors.Join(os.MkdirAll(backing, 0o755), os.MkdirAll(mnt, 0o755)); err != nil {
		return nil, "", err
	}
	fs, err := Mount(backing, mnt, Options{})
	if err != nil {
		return nil, "", err
	}
	return fs, mnt, nil
}
