package bench

import (
	"os"
	"sync"
	"syscall"
)

// consumerOSYield (QBENCH_CONSUMER_OSYIELD=1, an experiment, off by default) makes a consumer
// give up its CPU to the kernel (sched_yield) as soon as a receive returns, before it processes
// the messages: on the floor the server answers the consumer (blocked on the list) before the
// producer, and the consumer's thread, woken on the server's CPU, runs before the server has
// written the producer's reply.
var consumerOSYield = sync.OnceValue(func() bool { return os.Getenv("QBENCH_CONSUMER_OSYIELD") == "1" })

func osYield() { syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
