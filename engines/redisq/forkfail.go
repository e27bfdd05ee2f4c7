package redisq

// The fork-failure fault: the server's background save and log rewrite cannot start.
//
// On the in-repo server (the server target) DEBUG FORK-FAIL 1 makes them fail exactly where
// Redis's fork would, with Redis's log line, status and replies and ENOMEM (engines/server's
// persist_forkfail.go). A real redis-server qbench started (the redis target) really fails to
// fork: it is moved into a pids cgroup of its own whose pids.max is the tasks it has
// (procs.LimitTasks), so fork() fails with EAGAIN and Redis logs "Can't save in background:
// fork: Resource temporarily unavailable"; that needs a writable pids cgroup (root).

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"qbench/engines"
	"qbench/engines/procs"
)

// ForkFail makes the child server's background jobs fail to start, or start again
// (engines.ForkFailer).
func (e *childEngine) ForkFail(ctx context.Context, fail bool) error {
	arg := "0"
	if fail {
		arg = "1"
	}
	return e.client.Do(ctx, "DEBUG", "FORK-FAIL", arg).Err()
}

// ForkFail makes redis-server's fork() fail (EAGAIN, from a pids cgroup holding it at the tasks
// it has), or work again (engines.ForkFailer).
func (e *managedEngine) ForkFail(_ context.Context, fail bool) error { return e.server.ForkFail(fail) }

// ForkFail is managedEngine's for a redis-server on lossyfs (engines.ForkFailer).
func (e *lossyEngine) ForkFail(_ context.Context, fail bool) error { return e.server.ForkFail(fail) }

// ForkFail holds the server at the tasks it has (fail) or lets it go (not fail).
func (m *ManagedRedis) ForkFail(fail bool) error {
	if !fail {
		if m.tasks == nil {
			return nil
		}
		err := m.tasks.Release()
		m.tasks = nil
		return err
	}
	if m.tasks != nil {
		return nil
	}
	if m.PID() == 0 {
		return errors.New("redis-server is not running")
	}
	l, err := procs.LimitTasks(m.PID())
	if err != nil {
		return fmt.Errorf("fork-failure on redis-server: %w", err)
	}
	m.tasks = l
	return nil
}

// checkForkFailure refuses a run with a fork-failure fault on a redis-server this machine cannot
// hold in a pids cgroup, before anything starts.
func checkForkFailure(spec engines.Spec) error {
	if !slices.Contains(spec.Faults, "fork-failure") {
		return nil
	}
	if spec.Replicas > 0 {
		return errors.New("fork-failure with replicas is not supported yet (the fault holds the primary alone)")
	}
	if err := procs.CanLimitTasks(); err != nil {
		return fmt.Errorf("fork-failure on redis-server needs a pids cgroup qbench can write (cgroup v1's /sys/fs/cgroup/pids, or v2 with the pids controller; as root): %w", err)
	}
	return nil
}
