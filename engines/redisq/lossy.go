package redisq

import (
	"context"
	"errors"
	"fmt"
	"os"

	"qbench/engines"
	"qbench/engines/lossyfs"
)

// LossyRedis is a managed redis-server whose --dir is on a lossyfs mount, so a crash can be a
// power loss: everything Redis wrote but had not fsynced is gone. Needs root, /dev/fuse and
// fusermount3 (Debian's fuse3). The data directory is FS.Mountpoint(); ManagedRedis.Dir is only the
// process's working directory, outside the mount (see StartLossyRedis for why).
type LossyRedis struct {
	*ManagedRedis
	FS      *lossyfs.FS
	baseDir string // holds backing/ and mnt/; removed by Stop
}

// StartLossyRedis mounts lossyfs over a fresh directory and starts redis-server on the mount with
// config (Redis setting names and values, as StartRedis takes them).
func StartLossyRedis(ctx context.Context, config map[string]string) (*LossyRedis, error) {
	base, err := os.MkdirTemp("", "qbench-lossy-redis-")
	if err != nil {
		return nil, err
	}
	fs, mnt, err := lossyfs.MountUnder(base, "mnt")
	if err != nil {
		os.RemoveAll(base)
		return nil, err
	}
	l := &LossyRedis{FS: fs, baseDir: base}
	// The mount is Redis's --dir, but not the child's working directory: this process serves the
	// mount, and Go's fork (vfork) changes directory in the child before exec while holding one
	// of the parent's Ps with signals blocked. If the child then waits on the mount and a GC
	// stop-the-world begins, nobody serves the request: both hang for good. Redis changes into
	// --dir itself after exec, which is safe.
	settings := map[string]string{}
	for k, v := range config {
		settings[k] = v
	}
	settings["dir"] = mnt // after StartRedis's own --dir on the command line, so it wins
	if l.ManagedRedis, err = StartRedis(ctx, base, settings); err != nil {
		return nil, errors.Join(err, l.unmount())
	}
	return l, nil
}

// Crash kills redis-server without warning (SIGKILL); for a power loss it then cuts the power on
// the mount (every unsynced byte is dropped) and turns it back on, ready for Restart.
func (l *LossyRedis) Crash(_ context.Context, kind engines.CrashKind) error {
	switch kind {
	case engines.ProcessCrash, engines.PowerLoss:
	default:
		return fmt.Errorf("unknown crash kind %q", kind)
	}
	if err := l.Kill(); err != nil {
		return err
	}
	if kind == engines.PowerLoss {
		l.FS.Cut()
		l.FS.Recover()
	}
	return nil
}

// DiskFull makes the data directory refuse writes with ENOSPC (on) or accept them again (off).
func (l *LossyRedis) DiskFull(on bool) { l.FS.FailWrites(on) }

// Stop stops redis-server, unmounts and removes the directories.
func (l *LossyRedis) Stop() error {
	var err error
	if l.ManagedRedis != nil {
		err = l.ManagedRedis.Stop()
	}
	return errors.Join(err, l.unmount())
}

func (l *LossyRedis) unmount() error {
	err := l.FS.Unmount()
	return errors.Join(err, os.RemoveAll(l.baseDir))
}
