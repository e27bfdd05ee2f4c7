package procs

// A task limit: a process held at the number of tasks (threads) it has, so that its fork() fails
// with EAGAIN, through a pids cgroup of its own. The fork-failure fault on a real redis-server
// uses it. RLIMIT_NPROC would do the same for an unprivileged server, but qbench runs servers as
// the user it runs as, and root ignores RLIMIT_NPROC; a cgroup's pids.max holds root too.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupRoot is where the cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// TaskLimit is a process moved into a pids cgroup whose pids.max is the number of tasks it had.
type TaskLimit struct {
	pid  int
	dir  string // the cgroup made for it
	home string // the cgroup it came from, where Release puts it back
}

// pidsGroups finds the process's cgroup in the hierarchy with the pids controller (home) and
// where a group of qbench's goes (parent): cgroup v1's pids hierarchy, under the process's own
// group, or v2's unified one, when it has the pids controller, under the root (a v2 group with
// processes in it cannot hand controllers to children; the root can).
func pidsGroups(pid int) (home, parent string, v2 bool, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", "", false, err
	}
	var unified string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "pids" {
				home = filepath.Join(cgroupRoot, "pids", parts[2])
				return home, home, false, nil
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
	}
	if ctl, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil && unified != "" &&
		strings.Contains(" "+strings.TrimSpace(string(ctl))+" ", " pids ") {
		return filepath.Join(cgroupRoot, unified), cgroupRoot, true, nil
	}
	return "", "", false, errors.New("no pids cgroup controller is mounted (neither cgroup v1's /sys/fs/cgroup/pids nor v2's with pids)")
}

// LimitTasks holds pid at the tasks it has now: from the return on, its fork() and clone() fail
// with EAGAIN ("Resource temporarily unavailable") until Release. It needs a pids cgroup it can
// create and move pid into (root, or a delegated cgroup).
func LimitTasks(pid int) (*TaskLimit, error) {
	home, parent, v2, err := pidsGroups(pid)
	if err != nil {
		return nil, err
	}
	removeStale(parent)
	if v2 {
		// The root hands the pids controller to its children (a no-op when it does already).
		_ = writeCgroup(parent, "cgroup.subtree_control", "+pids")
	}
	dir := filepath.Join(parent, "qbench-tasks-"+strconv.Itoa(pid))
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return nil, fmt.Errorf("making a pids cgroup: %w", err)
	}
	l := &TaskLimit{pid: pid, dir: dir, home: home}
	if err := writeCgroup(dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("moving process %d into a pids cgroup: %w", pid, err)
	}
	cur, err := os.ReadFile(filepath.Join(dir, "pids.current"))
	if err == nil {
		err = writeCgroup(dir, "pids.max", strings.TrimSpace(string(cur)))
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("limiting process %d's tasks: %w", pid, err), l.Release())
	}
	return l, nil
}

// Release lifts the limit and puts the process back in its own cgroup; a process that has
// exited meanwhile only leaves the empty group, which is removed.
func (l *TaskLimit) Release() error {
	err := writeCgroup(l.dir, "pids.max", "max")
	if merr := writeCgroup(l.home, "cgroup.procs", strconv.Itoa(l.pid)); merr != nil && processAlive(l.pid) {
		err = errors.Join(err, fmt.Errorf("moving process %d back to its cgroup: %w", l.pid, merr))
	}
	if rerr := os.Remove(l.dir); rerr != nil && !os.IsNotExist(rerr) {
		err = errors.Join(err, rerr)
	}
	return err
}

// CanLimitTasks says whether LimitTasks can work here, by making and removing a pids cgroup.
func CanLimitTasks() error {
	_, parent, _, err := pidsGroups(os.Getpid())
	if err != nil {
		return err
	}
	dir := filepath.Join(parent, "qbench-tasks-probe-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("cannot make a pids cgroup (qbench must run as root, or in a delegated cgroup): %w", err)
	}
	if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// removeStale removes the groups of processes that are gone, left by a qbench that died while
// holding a limit (a group is named for the process it holds; an empty one can be removed).
func removeStale(parent string) {
	old, _ := filepath.Glob(filepath.Join(parent, "qbench-tasks-*"))
	for _, d := range old {
		if pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "qbench-tasks-")); err == nil && !processAlive(pid) {
			_ = os.Remove(d)
		}
	}
}

func writeCgroup(dir, file, value string) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644)
}

func processAlive(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}
