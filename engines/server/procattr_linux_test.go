//go:build linux

package server

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes a child process (redis-server) get SIGKILL when the test binary dies,
// so a killed or timed-out test run leaves no orphan server behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
