package server

// The event loop: one goroutine waits on epoll for every ordinary client, reads what each sent,
// runs all of it under one hold of the store lock, commits the turn's log writes once (one
// fdatasync under appendfsync always, as Redis's beforeSleep) and then writes each client's
// replies. A goroutine per connection costs a park and a wake-up per request, and the
// connections hand the store lock and the group commit to one another; here a turn costs
// Redis's read and write per client and an epoll_wait per turn.
//
// A client that blocks (BLPOP, XREADGROUP BLOCK) stays: it runs no commands until a write
// serves it (Server.wake queues it here: noteUnblocked), its timer fires or CLIENT UNBLOCK
// answers it, and the loop then replies after the turn's commit (takeNotified). A subscriber
// (asynchronous output: c.pending) stays as well; Server.deliver queues it (noteWritable) and
// the loop writes what it was sent (flushAsync). A client that cannot take its replies at once
// (a full socket buffer) or closes after a reply that may not fit leaves the loop for good: it
// gets its own goroutine with a net.Conn on the same socket (and a subscriber its writer
// goroutine), and conn.go serves it as before.

import (
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"qbench/engines/server/resp"
)

// loopTurn is a client's state within one turn of the loop.
type loopTurn struct {
	start, end int64      // the log's end before and after its commands
	blk        *blockSpec // the command the client is blocked on, if any (kept across turns)
	timerFor   *blockSpec // the block the client's timeout timer was last armed for
	served     bool       // a blocked command of the client's was served this turn (it wrote)
	more       bool       // stopped at maxBatchOut with commands still buffered
	dead       bool       // the connection is gone (read error, EOF, failed commit)
	queued     bool       // already in this turn's list
	fill       bool       // read again next turn: the socket may hold more than was read
	hup        bool       // the peer hung up or the socket failed: read until the end
}

type eventLoop struct {
	s      *Server
	epfd   int
	wakefd int

	mu      sync.Mutex
	added   []*client // adopted by the accept goroutine, not yet registered
	stopped bool      // the loop has freed its clients and exited

	byFD  map[int]*client // loop goroutine only
	again []*client       // clients with commands left over from the last turn, or to read again

	// unblocked holds the loop's blocked clients answered since the loop last looked (a write
	// served them, their timeout passed, CLIENT UNBLOCK), and writable its subscribers given
	// messages; inTurn says the loop is running a turn's commands. All under the store lock.
	// notified says unblocked or writable is not empty.
	unblocked []*blockSpec
	writable  []*client
	inTurn    bool
	notified  atomic.Bool

	spinMax         time.Duration // loopSpin, or Config.LoopSpin; <= 0: never spin
	spins, spinHits atomic.Int64  // spins begun, and those that found work (for tests)
	handoffs        atomic.Int64  // clients moved to a goroutine of their own (INFO: loop_handoffs)
}

// startEventLoop starts the loop, or returns nil (the caller serves connections on
// goroutines) when epoll cannot be set up.
func startEventLoop(s *Server) *eventLoop {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		s.logf("event loop: %v; serving connections on goroutines", err)
		return nil
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err == nil {
		err = syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, wakefd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(wakefd)})
	}
	if err != nil {
		syscall.Close(epfd)
		s.logf("event loop: %v; serving connections on goroutines", err)
		return nil
	}
	l := &eventLoop{s: s, epfd: epfd, wakefd: wakefd, byFD: map[int]*client{}, spinMax: loopSpin()}
	if s.cfg.LoopSpin != 0 {
		l.spinMax = s.cfg.LoopSpin
	}
	s.wg.Add(1)
	go l.run()
	return l
}

// wake interrupts epoll_wait (a new client, the server closing).
func (l *eventLoop) wake() {
	one := [8]byte{1}
	unix.Write(l.wakefd, one[:])
}

// adopt takes a newly accepted connection into the loop. It returns false if the caller should
// serve nc on a goroutine instead.
func (l *eventLoop) adopt(nc net.Conn) bool {
	s := l.s
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return false
	}
	c := s.admit(nc)
	if c == nil {
		nc.Close()
		s.forgetConn(nc)
		return true
	}
	lc, err := newLoopConn(tc)
	if err != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.forgetConn(nc)
			defer s.closeClient(c)
			c.loop()
		}()
		return true
	}
	s.mu.Lock()
	s.connMu.Lock()
	c.conn, c.lc = lc, lc
	c.rd.SetSource(lc)
	delete(s.conns, nc)
	s.conns[lc] = struct{}{}
	s.connMu.Unlock()
	s.mu.Unlock()
	nc.Close() // the loop's duplicate descriptor keeps the socket open
	l.mu.Lock()
	stopped := l.stopped
	if !stopped {
		l.added = append(l.added, c)
	}
	l.mu.Unlock()
	if stopped { // the server closed meanwhile: nobody else will free the client
		l.freeUnregistered(c)
		return true
	}
	l.wake()
	return true
}

// freeUnregistered frees a client adopted but never added to epoll.
func (l *eventLoop) freeUnregistered(c *client) {
	lc := c.lc
	l.s.closeClient(c)
	l.s.forgetConn(lc)
	lc.closeFD()
}

func (l *eventLoop) run() {
	defer l.s.wg.Done()
	events := make([]syscall.EpollEvent, 256)
	var ready []*client
	lastYield := time.Now()
	var gate spinGate
	for {
		if loopYield() && time.Since(lastYield) >= loopYieldEvery {
			runtime.Gosched()
			lastYield = time.Now()
		}
		var n int
		var err error
		switch {
		case len(l.again) > 0:
			n, err = syscall.EpollWait(l.epfd, events, 0)
		case l.spinMax <= 0:
			n, err = syscall.EpollWait(l.epfd, events, -1)
		default:
			if gate.want() {
				n = l.spin(events)
			}
			if n == 0 {
				t0 := time.Now()
				n, err = syscall.EpollWait(l.epfd, events, -1)
				gate.blocked(time.Since(t0) < l.spinMax)
			}
		}
		if err != nil && err != syscall.EINTR {
			l.s.logf("event loop: epoll_wait: %v", err)
			time.Sleep(time.Millisecond)
		}
		if l.s.isClosing.Load() {
			l.shutdown()
			return
		}
		ready = append(ready[:0], l.again...)
		l.again = l.again[:0]
		for _, c := range ready {
			c.turn.queued = true
			if c.turn.fill {
				l.fill(c, 0)
			}
		}
		for _, ev := range events[:max(n, 0)] {
			fd := int(ev.Fd)
			if fd == l.wakefd {
				l.register()
				continue
			}
			c := l.byFD[fd]
			if c == nil {
				continue
			}
			l.fill(c, ev.Events)
			if !c.turn.queued {
				c.turn.queued = true
				ready = append(ready, c)
			}
		}
		if l.spinMax > 0 {
			gate.turn(ready)
		}
		if len(ready) == 0 && !l.notified.Load() {
			continue
		}
		var woke bool
		if ready, woke = l.runTurn(ready); woke && len(l.again) == 0 && loopYieldWoken() {
			// The turn readied client goroutines: run them before waiting (see
			// loopYieldWoken).
			runtime.Gosched()
		}
	}
}

// spin polls epoll without blocking for up to spinMax and returns the events it found (0:
// none came, block). A poll that fails counts as none: the blocking wait reports the error.
// The polls are raw system calls: they never block, so they skip the scheduler's bookkeeping.
func (l *eventLoop) spin(events []syscall.EpollEvent) int {
	l.spins.Add(1)
	t0 := time.Now()
	for {
		n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_WAIT, uintptr(l.epfd),
			uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
		if errno == 0 && n > 0 {
			l.spinHits.Add(1)
			return int(n)
		}
		if time.Since(t0) >= l.spinMax {
			return 0
		}
	}
}

// spinGate decides, wait by wait, whether the loop polls before it blocks (see loopSpin): only
// while load is high, that is the last blocking wait ended within the cap and the last turn served
// several clients, or one other than the turn before. One client alone (redis-benchmark -c 1: one
// request in flight) never makes it poll: its next request comes a round trip later, often after
// the cap (polling after every short wait, polls found work in 50% of waits at -c 1 and cost the
// server 70% more CPU per request). At -c 50 unpipelined most turns serve one client, each a
// different one.
type spinGate struct {
	hot    bool // the last blocking wait ended within the cap
	busy   bool // the last turn served several clients, or one other than the turn before
	lastFD int  // the one client of the last single-client turn
}

func (g *spinGate) want() bool         { return g.hot && g.busy }
func (g *spinGate) blocked(short bool) { g.hot = short }

func (g *spinGate) turn(ready []*client) {
	switch len(ready) {
	case 0:
		g.busy = false
	case 1:
		fd := ready[0].lc.fd
		g.busy = fd != g.lastFD
		g.lastFD = fd
	default:
		g.busy = true
	}
}

// spinCounts reports the polls begun and those that found work (INFO stats: loop_spins,
// loop_spin_hits); 0, 0 for a nil loop (connections on goroutines).
func (l *eventLoop) spinCounts() (spins, hits int64) {
	if l == nil {
		return 0, 0
	}
	return l.spins.Load(), l.spinHits.Load()
}

// handoffCount is the number of clients moved out of the loop (INFO stats: loop_handoffs); 0
// for a nil loop.
func (l *eventLoop) handoffCount() int64 {
	if l == nil {
		return 0
	}
	return l.handoffs.Load()
}

// fill reads what c's socket holds into its buffer. Sockets are edge-triggered: epoll reports
// a socket once per arrival, not at every epoll_wait while it stays readable, so each read
// socket costs one poll instead of two (level-triggered, epoll re-polls every socket it
// reported at the next epoll_wait to see whether it is still readable: unpipelined that was
// ~7% of the server's CPU per request). The price is that nothing reports what a read left
// behind, so the loop reads again itself next turn (turn.fill) when it may have left bytes: the
// read filled the buffer, or the peer hung up (its FIN came with the bytes read, so no later
// arrival will report the end of stream) and the end is not read yet.
func (l *eventLoop) fill(c *client, events uint32) {
	t := &c.turn
	t.fill = false
	if err := c.rd.Fill(); err != nil && err != errAgain {
		t.dead = true
		return
	}
	if events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		t.hup = true
	}
	t.fill = t.hup || c.rd.Full()
}

// register adds the clients adopted since the last turn to epoll.
func (l *eventLoop) register() {
	var buf [8]byte
	unix.Read(l.wakefd, buf[:])
	l.mu.Lock()
	added := l.added
	l.added = nil
	l.mu.Unlock()
	for _, c := range added {
		fd := c.lc.fd
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
		if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			l.s.logf("event loop: epoll_ctl: %v", err)
			l.free(c)
			continue
		}
		l.byFD[fd] = c
	}
}

// runTurn executes every ready client's buffered commands under one hold of the store lock,
// answers the blocked clients served meanwhile, commits the log once, then replies. A client
// blocked on a key takes no commands until it is answered. It returns ready with the answered
// clients added, and whether the turn readied client goroutines (Server.woken).
func (l *eventLoop) runTurn(ready []*client) (_ []*client, woke bool) {
	s := l.s
	s.mu.Lock()
	l.inTurn = true
	now := s.p.startTurn()
	for _, c := range ready {
		t := &c.turn
		t.start, t.more = s.p.batchEnd(), false
		t.end = t.start
		if t.blk != nil {
			continue // blocked: what it sent stays buffered until it is answered
		}
		for !c.closeAfter {
			args, ok, err := c.rd.Next()
			if err != nil {
				c.out = resp.AppendError(c.out, err.Error())
				s.logf("client %d: %v", c.id, err)
				c.closeAfter = true
				break
			}
			if !ok {
				break
			}
			c.lastCmd = now
			if t.blk = c.execute(args); t.blk != nil || c.closeAfter {
				break
			}
			if len(c.out) >= maxBatchOut {
				t.more = c.rd.Buffered() > 0
				break
			}
		}
		t.end = s.p.batchEnd()
		if c.async && !c.abort && !t.dead {
			// An asynchronous client's replies are queued under the lock, in order with what
			// others publish to it: commit first (as conn.go's loop does).
			if t.end > t.start {
				w := s.p.w
				s.p.endTurn()
				s.mu.Unlock()
				ok := s.p.commitInline(w, t.end, true)
				s.mu.Lock()
				now = s.p.startTurn()
				if !ok {
					t.dead = true
				}
			}
			c.queueAsync(c.out)
			c.out = c.out[:0]
		}
	}
	ready = l.takeNotified(ready)
	end, w := s.p.batchEnd(), s.p.w
	woke = s.woken > 0
	s.woken = 0
	l.inTurn = false
	s.p.endTurn()
	s.mu.Unlock()
	// Group commit: no reply leaves before the log holds what it depends on. If the log
	// failed, the clients whose own writes it lost get no reply (persist.go's commit).
	committed := s.p.commitInline(w, end, true)
	for _, c := range ready {
		t := &c.turn
		t.queued = false
		wrote := t.end > t.start || t.served
		t.served = false
		if t.dead || c.abort || (!committed && wrote) {
			l.free(c)
			continue
		}
		var rest []byte
		if c.async {
			alive, all := l.flushAsync(c)
			if !alive {
				l.free(c)
				continue
			}
			if !all {
				blk := t.blk
				t.blk = nil
				l.handoff(c, nil, blk) // its writer goroutine writes the rest
				continue
			}
		} else if rest = c.out; len(rest) > 0 {
			n, err := c.lc.Write(rest)
			s.stats.netOutput.Add(int64(n))
			if err != nil && err != errAgain {
				l.free(c)
				continue
			}
			rest = rest[n:]
		}
		if len(rest) > 0 || (t.blk != nil && !blockInLoop()) || (c.async && !subscribeInLoop()) {
			blk := t.blk
			t.blk = nil
			l.handoff(c, rest, blk)
			continue
		}
		if t.blk != nil && t.blk.timeout > 0 && t.timerFor != t.blk {
			l.armTimeout(c, t.blk)
		}
		c.resetOut()
		if c.closeAfter {
			l.free(c)
			continue
		}
		if t.more || t.fill {
			l.again = append(l.again, c)
		}
	}
	return ready, woke
}

// noteUnblocked queues b, just answered (Server.wake: its reply is in b.done), for the loop to
// reply to its client. Store lock held.
func (l *eventLoop) noteUnblocked(b *blockSpec) {
	l.unblocked = append(l.unblocked, b)
	l.notify()
}

// noteWritable queues c, a subscriber of the loop's just given a message (Server.deliver: it is
// in c.pending), for the loop to write. Store lock held.
func (l *eventLoop) noteWritable(c *client) {
	if c.loopWritable {
		return
	}
	c.loopWritable = true
	l.writable = append(l.writable, c)
	l.notify()
}

// notify wakes the loop for what was just queued, unless the loop is running a turn (it takes
// the queues before replying) or was already woken for an earlier entry. Store lock held.
func (l *eventLoop) notify() {
	l.notified.Store(true)
	if !l.inTurn && len(l.unblocked)+len(l.writable) == 1 {
		l.wake()
	}
}

// takeNotified adds to ready the clients queued since the last turn (or by this one: Redis
// serves a blocked client after the command that readied its key, and writes a subscriber's
// messages, in the same event loop turn), to be replied to after the turn's commit: each
// answered blocked client with its reply added to its output, each subscriber given messages.
// A client handed to a goroutine or freed meanwhile (its lc is nil) is skipped: its goroutine,
// or nobody, takes what was queued. Store lock held.
func (l *eventLoop) takeNotified(ready []*client) []*client {
	for _, c := range l.writable {
		c.loopWritable = false
		if c.inLoop() && !c.turn.queued {
			c.turn.queued = true
			c.turn.start, c.turn.end = 0, 0
			ready = append(ready, c)
		}
	}
	clear(l.writable)
	l.writable = l.writable[:0]
	for _, b := range l.unblocked {
		c := b.c
		if !c.inLoop() || c.turn.blk != b {
			continue
		}
		t := &c.turn
		t.blk, t.served = nil, true
		c.unblockedReply(b, <-b.done) // Server.wake sent it before queueing b
		if c.blockTimer != nil {
			c.blockTimer.Stop()
		}
		t.more = c.rd.Buffered() > 0 // commands sent while it was blocked run next turn
		if !t.queued {
			t.queued = true
			t.start, t.end = 0, 0
			ready = append(ready, c)
		}
	}
	clear(l.unblocked)
	l.unblocked = l.unblocked[:0]
	l.notified.Store(false)
	return ready
}

// flushAsync writes a subscriber's queued output (its replies, queued after everything it was
// sent before them, then all of c.pending) as far as the socket takes it. alive is false when
// the socket failed; all is false when the socket was full, the rest then back at the head of
// c.pending for the writer goroutine the client is handed to. A client killed for its output
// buffer limit writes nothing: its socket is shut, and the loop frees it at the hang-up.
func (l *eventLoop) flushAsync(c *client) (alive, all bool) {
	c.queueAsync(c.out)
	c.out = c.out[:0]
	c.pmu.Lock()
	if c.killed {
		c.pmu.Unlock()
		return true, true
	}
	buf := c.pending
	c.pending, c.pendingSpare = c.pendingSpare, outQueue{}
	c.softSince = time.Time{}
	c.pmu.Unlock()
	if buf.n == 0 {
		c.pendingSpare = buf
		return true, true
	}
	n, err := c.lc.Writev(buf.vectors())
	l.s.stats.netOutput.Add(int64(n))
	switch {
	case err == nil:
		buf.reset()
		c.pendingSpare = buf
		return true, true
	case err != errAgain:
		return false, false
	}
	// The rest goes back as it is: references to the same chunks and messages, no copy.
	buf.advance(n)
	c.pmu.Lock()
	c.pending.prepend(&buf)
	c.pmu.Unlock()
	return true, false
}

// armTimeout starts (or restarts) c's timer for b's deadline. The timer answers whatever block
// the client is in when it fires, only if that block's deadline has passed, so a fire left from
// an earlier block does nothing.
func (l *eventLoop) armTimeout(c *client, b *blockSpec) {
	c.turn.timerFor = b
	d := time.Until(b.deadline)
	if c.blockTimer == nil {
		s := l.s
		c.blockTimer = time.AfterFunc(d, func() {
			s.mu.Lock()
			if b := c.blockedOn; b != nil && !b.served && b.timeout > 0 && !time.Now().Before(b.deadline) {
				s.wake(b, b.timeoutReply, false, "")
			}
			s.mu.Unlock()
		})
		return
	}
	c.blockTimer.Reset(d)
}

// handoff moves c out of the loop onto its own goroutine and a net.Conn for the same socket:
// it writes rest (replies the socket did not take), waits on blk if a command blocked, then
// serves the connection as conn.go does.
func (l *eventLoop) handoff(c *client, rest []byte, blk *blockSpec) {
	s := l.s
	l.handoffs.Add(1)
	lc := c.lc
	l.unregister(lc)
	nc, err := lc.toNetConn()
	if err != nil {
		s.logf("client %d: leaving the event loop: %v", c.id, err)
		l.free(c)
		return
	}
	s.mu.Lock()
	s.connMu.Lock()
	c.conn, c.lc = nc, nil
	c.rd.SetSource(nc)
	delete(s.conns, lc)
	s.conns[nc] = struct{}{}
	killed := lc.shut || s.isClosing.Load()
	s.connMu.Unlock()
	s.mu.Unlock()
	if killed {
		nc.Close() // CLIENT KILL or Close reached the loop's socket first
	}
	c.pmu.Lock()
	c.startWriterLocked()
	c.pmu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.forgetConn(nc)
		defer s.closeClient(c)
		if len(rest) > 0 {
			if !c.writeDirect(rest) {
				return
			}
		}
		c.out = c.out[:0]
		if c.closeAfter {
			c.drainAsync()
			return
		}
		if blk != nil && !c.waitBlocked(blk) {
			return
		}
		c.loop()
	}()
}

func (l *eventLoop) unregister(lc *loopConn) {
	syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, lc.fd, nil)
	delete(l.byFD, lc.fd)
}

// free closes a loop client: forgets it, then closes the descriptor (after nobody can reach
// it through s.clients or s.conns, so a CLIENT KILL never shuts down a reused number).
func (l *eventLoop) free(c *client) {
	lc := c.lc
	l.unregister(lc)
	if c.blockTimer != nil {
		c.blockTimer.Stop()
	}
	l.s.mu.Lock()
	if blk := c.turn.blk; blk != nil && !blk.served {
		// It is blocked and its connection died: no write may serve it any more.
		l.s.blocked.remove(blk)
		blk.served = true
	}
	c.turn.blk = nil
	c.lc = nil // nothing queues it for the loop any more (Server.wake, Server.deliver)
	l.s.mu.Unlock()
	l.s.closeClient(c)
	l.s.forgetConn(lc)
	lc.closeFD()
}

// shutdown frees every client when the server closes.
func (l *eventLoop) shutdown() {
	l.mu.Lock()
	added := l.added
	l.added, l.stopped = nil, true
	l.mu.Unlock()
	for _, c := range l.byFD {
		l.free(c)
	}
	for _, c := range added {
		l.freeUnregistered(c)
	}
	syscall.Close(l.epfd)
	syscall.Close(l.wakefd)
}

// The loop yields its processor every loopYieldEvery. It never parks (it waits in epoll_wait,
// a system call), so without a yield the runtime sees one goroutine running for ever: every
// 10 ms sysmon preempts it, or takes its P away in the middle of epoll_wait, and each such
// take resets sysmon's back-off to 20 us wake-ups. Unpipelined at 50 clients that was 0.03-0.04
// nanosleep per request (Redis: none) and 8% of the process's CPU ticks in sysmon's thread;
// under appendfsync always at one client 0.75 nanosleep per request. A yield every 5 ms (under
// the 10 ms time slice) brings these to 0.002-0.006 and 0.2. Its price: Gosched wakes an idle
// thread, which may take the loop over (futex 0.004 -> 0.006-0.02 per request unpipelined;
// 0.12 -> 0.29 and sched_yield 0 -> 0.04 under always). QBENCH_SERVER_LOOP_YIELD=0 turns it
// off, for re-measuring.
const loopYieldEvery = 5 * time.Millisecond

// The loop also yields after a turn that readied client goroutines (a BRPOP or XREADGROUP BLOCK
// served by the turn's LPUSH or XADD, a subscriber's writer given a PUBLISH), before it waits
// in epoll_wait. Those goroutines were
// readied on the loop's processor (the runtime queues a goroutine woken by a channel send on
// the sender's processor), and epoll_wait keeps that processor in a system call: when the other
// processors were busy, the consumer waited until one was free or sysmon took the processor
// away (sysmon sleeps up to 10 ms when idle): a light-load delivery tail that Redis, one
// thread, does not have. The yield runs them first, and costs no system call. Off unless
// QBENCH_SERVER_LOOP_YIELD_WOKEN=1: on a quiet 2-vCPU VM (engines/server/bench/tail-ab.sh, 4
// designs, alternated) it made produce p99 worse in 7 of 8 pairs (list 4.72 -> 5.30 and 2.33 -> 13.58 ms,
// pubsub 2.83 -> 7.67 and 7.18 -> 11.08 ms), though the runtime counted fewer long waits in
// some of them.
var loopYieldWoken = sync.OnceValue(func() bool { return os.Getenv("QBENCH_SERVER_LOOP_YIELD_WOKEN") == "1" })

var loopYield = sync.OnceValue(func() bool { return os.Getenv("QBENCH_SERVER_LOOP_YIELD") != "0" })

// blockInLoop keeps blocked clients in the loop (answerUnblocked). QBENCH_SERVER_BLOCK_IN_LOOP=0
// hands each to a goroutine at its first block instead, the earlier design, for re-measuring
// (engines/server/bench/tail-ab.sh).
var blockInLoop = sync.OnceValue(func() bool { return os.Getenv("QBENCH_SERVER_BLOCK_IN_LOOP") != "0" })

// subscribeInLoop keeps subscribers in the loop while their sockets take what they are sent
// (flushAsync). QBENCH_SERVER_SUBSCRIBE_IN_LOOP=0 hands each to a goroutine and a writer
// goroutine once it subscribes, the earlier design, for re-measuring.
var subscribeInLoop = sync.OnceValue(func() bool { return os.Getenv("QBENCH_SERVER_SUBSCRIBE_IN_LOOP") != "0" })

// loopSpin bounds an adaptive poll before the loop blocks. Each time the loop finds no work and
// blocks in epoll_wait, the client whose write ends the wait pays the wake-up of a halted thread
// (try_to_wake_up, an IPI; charged to the client's CPU), or is preempted by it. While load is high
// (spinGate: the last blocking wait ended within loopSpin, and the last turn served several
// clients or another one than the turn before) the loop first polls epoll_wait with timeout 0
// for up to loopSpin, then blocks. An idle or lightly loaded server, or one client alone, blocks
// at once. QBENCH_SERVER_LOOP_SPIN_US sets it in microseconds (0: off, always block). Off by
// default: at 30 us it halved the server's blocks per request unpipelined at 50 clients, but cost
// 8-20% more server CPU per request, and the client's CPU per request did not measurably fall
// (engines/server/README.md, "Polling before blocking").
var loopSpin = sync.OnceValue(spinFromEnv)

const defaultLoopSpin = 0

func spinFromEnv() time.Duration {
	us := defaultLoopSpin
	if v := os.Getenv("QBENCH_SERVER_LOOP_SPIN_US"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n <= 10000 {
			us = n
		}
	}
	return time.Duration(us) * time.Microsecond
}
