package fsys

import "syscall"

// errNoSpace is what a full disk returns.
var errNoSpace error = syscall.ENOSPC
