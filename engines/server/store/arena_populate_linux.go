package store

import (
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// populateBroken is set once MADV_POPULATE_WRITE fails (kernels before 5.14): from then on
// chunks are faulted in whole when mapped (MAP_POPULATE), as before populating in steps.
var populateBroken atomic.Bool

func mapPopulate() int {
	if populateBroken.Load() {
		return syscall.MAP_POPULATE
	}
	return 0
}

// populate faults b's pages in for writing, so the event loop's first store into them takes
// no page fault. b starts on a page boundary.
func populate(b []byte) {
	if len(b) == 0 || populateBroken.Load() {
		return
	}
	if err := unix.Madvise(b, unix.MADV_POPULATE_WRITE); err != nil {
		populateBroken.Store(true)
	}
}
