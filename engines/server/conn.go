package server

import (
	"errors"
	"net"
	"sync"
	"time"

	"qbench/engines/server/resp"
)

// client is one connection's state. Fields are guarded by the store lock unless noted.
type client struct {
	s      *Server
	id     int64
	conn   net.Conn
	rd     *resp.Reader // used only by the connection goroutine
	out    []byte       // replies of the current batch
	db     int
	proto  int
	name   string
	lib    string
	authed bool

	created     time.Time
	lastCmd     time.Time
	lastCmdName string
	closeAfter  bool // reply, then close (QUIT, protocol error)
	abort       bool // close without a reply (an HTTP request: see securityWarning)

	// CLIENT REPLY: replyOff drops every reply; skipThis drops the current command's, and
	// skipNext makes the next command's dropped too (SKIP).
	replyOff, skipThis, skipNext bool

	// logAs, if a write handler sets it, is logged to the AOF instead of the command (SPOP
	// logs the SREM of what it chose, as Redis propagates it).
	logAs [][]byte

	// popBuf holds a popped element until its reply is encoded (cmd_list.go's bulkReply).
	popBuf []byte

	// MULTI state.
	inMulti  bool
	multiErr bool // a command was rejected while queueing: EXEC aborts
	queued   [][][]byte
	inExec   bool

	blockedOn  *blockSpec  // the blocking command waiting, if any
	watch      *blockWatch // waitBlocked's socket watch, kept for the client's next block
	blockTimer *time.Timer // the event loop's timeout for a block (evloop_linux.go), kept

	// lc is the socket while the event loop serves the client (evloop_linux.go); nil once the
	// client has its own goroutine. turn is the loop's per-turn state, loop goroutine only.
	lc   *loopConn
	turn loopTurn

	// WATCH state.
	watched  []dbKey
	dirtyCAS bool

	// Pub/sub.
	channels map[string]struct{}
	patterns map[string]struct{}

	// Asynchronous output (pub/sub): once a client subscribes, everything it is sent goes
	// through pending and a writer goroutine, so publishers never block on a slow socket.
	pmu     sync.Mutex
	async   bool
	pending outQueue // unwritten output (outqueue.go)
	// pendingSpare is the event loop's written-out pending queue, kept for reuse (loop goroutine).
	pendingSpare outQueue
	// loopWritable: queued for the event loop to write pending (eventLoop.noteWritable); store lock.
	loopWritable bool
	wake         chan struct{}
	writerOn     bool      // the writer goroutine runs
	softSince    time.Time // when pending first exceeded the soft limit
	// inflight: bytes the writer goroutine took from pending and is writing (a blocking write
	// to a slow reader): still unsent, so the output buffer limit counts them (pmu)
	inflight int
	// normalSoftSince: when the replies first exceeded the normal class's soft limit.
	normalSoftSince time.Time
	killed          bool
}

// serveConn serves one connection on its own goroutine (the design off Linux, with
// Config.GoroutinePerConn, and where the event loop could not adopt the socket).
func (s *Server) serveConn(nc net.Conn) {
	c := s.admit(nc)
	if c == nil {
		nc.Close()
		return
	}
	defer s.closeClient(c)
	c.loop()
}

// admit makes nc a client, or refuses it with Redis's error (max clients, protected mode) and
// returns nil; the caller then closes nc.
func (s *Server) admit(nc net.Conn) *client {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c := &client{
		s:       s,
		id:      s.nextID.Add(1),
		conn:    nc,
		rd:      resp.NewReader(nc),
		proto:   2,
		created: time.Now(),
	}
	c.lastCmd = c.created
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.connectionsReceived++
	c.rd.MaxBulkLen = s.conf.protoMaxBulkLen
	if s.conf.requirePass == "" {
		c.authed = true
	}
	c.rd.Unauthenticated = !c.authed
	if len(s.clients) >= s.conf.maxClients {
		s.stats.rejectedConns++
		nc.Write([]byte("-" + errMaxClients + "\r\n"))
		return nil
	}
	if msg := s.protectedModeRefusal(nc); msg != "" {
		nc.Write([]byte("-" + msg + "\r\n"))
		return nil
	}
	s.clients[c.id] = c
	return c
}

// closeClient forgets c and closes its connection (store lock not held).
func (s *Server) closeClient(c *client) {
	s.mu.Lock()
	s.freeClient(c)
	s.mu.Unlock()
	c.stopAsync()
	c.conn.Close()
}

// freeClient forgets a closing client (store lock held).
func (s *Server) freeClient(c *client) {
	delete(s.clients, c.id)
	s.pubsub.unsubscribeAll(c)
	c.unwatchAll()
}

// maxBatchOut ends a batch once its replies reach this size: the rest of what the client
// pipelined stays in the read buffer for the next turn. Without it, a client that pipelines
// large reads (100 XREADGROUP COUNT 10000) grows one output buffer to hold every reply, and
// the process's RSS with it. Redis caps a write per event the same way (NET_MAX_WRITES_PER_EVENT).
const maxBatchOut = 64 << 10

func (c *client) loop() {
	s := c.s
	for {
		args, err := c.rd.ReadCommand()
		if err != nil {
			if resp.IsProtocolError(err) {
				c.writeDirect(resp.AppendError(nil, err.Error()))
				s.logf("client %d: %v", c.id, err)
			}
			return
		}
		c.lastCmd = time.Now()
		s.mu.Lock()
		aofStart := s.p.batchEnd()
		var blk *blockSpec
		// Execute everything already received, then reply once. This batch boundary is where the
		// append-only file group-commits: the batch's writes are logged (and, under appendfsync
		// always, synced) before its replies leave.
		for {
			blk = c.execute(args)
			if blk != nil || c.closeAfter || len(c.out) >= maxBatchOut {
				break
			}
			var ok bool
			args, ok, err = c.rd.Next()
			if err != nil {
				c.out = resp.AppendError(c.out, err.Error())
				c.closeAfter = true
				break
			}
			if !ok {
				break
			}
		}
		if c.abort {
			s.mu.Unlock()
			return
		}
		// Group commit: no reply leaves before the log holds what it depends on (persist.go).
		aofEnd, aofW := s.p.batchEnd(), s.p.w
		if c.async && aofEnd > aofStart {
			s.mu.Unlock() // an asynchronous client's replies are queued under the lock: commit first
			ok := s.p.commit(aofW, aofEnd, true)
			s.mu.Lock()
			if !ok {
				s.mu.Unlock()
				return
			}
		}
		if c.async {
			c.queueAsync(c.out)
			c.out = c.out[:0]
		}
		s.mu.Unlock()
		if !s.p.commit(aofW, aofEnd, aofEnd > aofStart) {
			return
		}
		if len(c.out) > 0 {
			if !c.writeDirect(c.out) {
				return
			}
			c.resetOut()
		}
		if c.closeAfter {
			c.drainAsync()
			return
		}
		if blk != nil {
			if !c.waitBlocked(blk) {
				return
			}
		}
	}
}

// inLoop says the event loop serves c (its socket is the loop's; the loop then takes what a
// write serves c or a publisher sends it). Store lock held. False for a nil client.
func (c *client) inLoop() bool { return c != nil && c.lc != nil }

// writeDirect writes b to the socket; false when the connection is gone.
func (c *client) writeDirect(b []byte) bool {
	if c.isAsync() {
		c.pmu.Lock()
		c.appendPendingLocked(b, false)
		c.pmu.Unlock()
		return true
	}
	n, err := c.conn.Write(b)
	c.s.stats.netOutput.Add(int64(n))
	return err == nil
}

func (c *client) isAsync() bool {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.async
}

// reply appends one reply for this client's protocol, unless CLIENT REPLY says not to. Pub/sub
// confirmations (SUBSCRIBE, UNSUBSCRIBE and their pattern forms, built as resp.Push) are sent
// whatever CLIENT REPLY says, as Redis 7.0 sends them (its CLIENT_PUSHING flag).
func (c *client) reply(v any) {
	c.countErrors(v)
	if (c.replyOff || c.skipThis) && !c.inExec {
		c.replyPushesOnly(v)
		return
	}
	if rs, ok := v.(replies); ok {
		for _, r := range rs {
			c.out = resp.AppendValue(c.out, r, c.proto)
		}
	} else {
		c.out = resp.AppendValue(c.out, v, c.proto)
	}
	if l := c.s.conf.obuf[obufNormal]; l.hard > 0 || l.soft > 0 {
		c.checkNormalLimit(l)
	}
}

// checkNormalLimit holds a client that is not subscribed to the normal class's
// client-output-buffer-limit, counting the replies not yet written (this batch's): past the
// hard limit, or past the soft one in batches spanning more than its seconds, it is closed
// without them, as Redis closes a client whose reply list grows past the limit. Store lock held.
func (c *client) checkNormalLimit(l obufLimit) {
	if c.subscriptions() > 0 {
		return // the pubsub class (checkLimitLocked)
	}
	n := int64(len(c.out))
	over := l.hard > 0 && n >= l.hard
	if !over && l.soft > 0 && n >= l.soft {
		now := time.Now()
		if c.normalSoftSince.IsZero() {
			c.normalSoftSince = now
		} else if now.Sub(c.normalSoftSince) > time.Duration(l.secs)*time.Second {
			over = true
		}
	} else if l.soft > 0 && n < l.soft {
		c.normalSoftSince = time.Time{}
	}
	if over {
		c.s.logf("Client id=%d scheduled to be closed ASAP for overcoming of output buffer limits.", c.id)
		c.closeAfter, c.abort = true, true
		c.out = c.out[:0]
	}
}

// countErrors counts the error replies in v (cmdstats.go), whether or not they are sent.
func (c *client) countErrors(v any) {
	switch x := v.(type) {
	case error:
		c.s.stats.errs.countError(x.Error())
	case replies:
		for _, r := range x {
			if e, ok := r.(error); ok {
				c.s.stats.errs.countError(e.Error())
			}
		}
	}
}

// unblockedReply appends the reply to a blocked command and counts the command's call.
func (c *client) unblockedReply(b *blockSpec, v any) {
	c.reply(v)
	c.s.stats.errs.unblocked(b.cmd, v)
}

// replyPushesOnly appends the pushes among v, for a client whose other replies are held back.
func (c *client) replyPushesOnly(v any) {
	rs, ok := v.(replies)
	if !ok {
		rs = replies{v}
	}
	for _, r := range rs {
		if p, ok := r.(resp.Push); ok {
			c.out = resp.AppendValue(c.out, p, c.proto)
		}
	}
}

// waitBlocked waits until blk is served, times out, the client disconnects or the server
// closes. It watches the socket meanwhile: bytes that arrive are kept for after the block, and
// a disconnect forgets the blocked client. It returns false if the connection is gone.
func (c *client) waitBlocked(blk *blockSpec) bool {
	s := c.s
	w := c.watch
	if w == nil {
		w = &blockWatch{c: c, buf: make([]byte, 4096), done: make(chan watchResult, 1)}
		c.watch = w
	}
	readDone := w.done
	startRead := func() { go w.read() }
	startRead()
	reading := true
	var timeout <-chan time.Time
	if blk.timeout > 0 {
		if w.timer == nil {
			w.timer = time.NewTimer(time.Until(blk.deadline))
		} else {
			w.timer.Reset(time.Until(blk.deadline))
		}
		defer w.timer.Stop()
		timeout = w.timer.C
	}
	var reply any
	alive := true
wait:
	for {
		select {
		case reply = <-blk.done:
			break wait
		case <-timeout:
			s.mu.Lock()
			if !blk.served {
				s.blocked.remove(blk)
				blk.served = true
				reply = blk.timeoutReply
			} else {
				reply = <-blk.done
			}
			s.mu.Unlock()
			break wait
		case r := <-readDone:
			reading = false
			if len(r.b) > 0 {
				c.rd.Feed(r.b)
			}
			if r.err != nil {
				s.mu.Lock()
				if !blk.served {
					s.blocked.remove(blk)
					blk.served = true
				}
				s.mu.Unlock()
				alive = false
				break wait
			}
			startRead()
			reading = true
		case <-s.closing:
			return false
		}
	}
	if reading {
		// Interrupt the watching read and keep whatever it got.
		c.conn.SetReadDeadline(time.Now())
		r := <-readDone
		if len(r.b) > 0 {
			c.rd.Feed(r.b)
		}
		c.conn.SetReadDeadline(time.Time{})
		var ne net.Error
		if r.err != nil && !(errors.As(r.err, &ne) && ne.Timeout()) {
			alive = false
		}
	}
	if !alive {
		return false
	}
	s.mu.Lock()
	c.unblockedReply(blk, reply)
	if c.async {
		c.queueAsync(c.out)
		c.out = c.out[:0]
	}
	aofEnd, aofW := s.p.batchEnd(), s.p.w
	s.mu.Unlock()
	if !s.p.commit(aofW, aofEnd, true) {
		return false
	}
	if len(c.out) > 0 {
		ok := c.writeDirect(c.out)
		c.out = c.out[:0]
		return ok
	}
	return true
}

// startAsync switches the client to asynchronous output (store lock held).
func (c *client) startAsync() {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if c.async {
		return
	}
	c.async = true
	c.wake = make(chan struct{}, 1)
	if c.lc != nil {
		return // the event loop hands the client to its own goroutine, then starts the writer
	}
	c.startWriterLocked()
}

// startWriterLocked starts the writer goroutine of an asynchronous client (c.pmu held).
func (c *client) startWriterLocked() {
	if c.writerOn || c.wake == nil {
		return
	}
	c.writerOn = true
	c.s.wg.Add(1)
	go c.writer(c.wake)
}

// queueAsync hands a copy of b to the writer goroutine.
func (c *client) queueAsync(b []byte) {
	if len(b) == 0 {
		return
	}
	c.pmu.Lock()
	c.appendPendingLocked(b, false)
	c.pmu.Unlock()
}

// appendPendingLocked queues b: a reference to it if shared (an encoded message nobody
// modifies again, which other subscribers' queues may refer to too), else a copy (c.pmu held).
func (c *client) appendPendingLocked(b []byte, shared bool) {
	if c.killed {
		return
	}
	if shared {
		c.pending.pushShared(b)
	} else {
		c.pending.pushCopy(b)
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *client) writer(wake chan struct{}) {
	defer c.s.wg.Done()
	var buf outQueue
	for range wake {
		for {
			c.pmu.Lock()
			buf, c.pending = c.pending, buf
			c.inflight = buf.n // still unsent: the soft limit's clock goes on
			c.pmu.Unlock()
			if buf.n == 0 {
				break
			}
			n, err := buf.writeTo(c.conn)
			c.s.stats.netOutput.Add(n)
			c.pmu.Lock()
			c.inflight = 0
			c.pmu.Unlock()
			buf.reset()
			if err != nil {
				c.conn.Close()
				for range wake {
				}
				return
			}
		}
	}
}

// drainAsync waits (briefly) for queued output to be written before a close.
func (c *client) drainAsync() {
	if !c.isAsync() {
		return
	}
	for i := 0; i < 100; i++ {
		c.pmu.Lock()
		n := c.pending.n
		c.pmu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (c *client) stopAsync() {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if c.async && c.wake != nil {
		close(c.wake)
		c.wake = nil
		c.killed = true
	}
}

// pendingBytes is the size of the client's unwritten asynchronous output.
func (c *client) pendingBytes() int {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.pending.n
}

// protectedModeRefusal is Redis's protected mode: with no password, only loopback clients.
func (s *Server) protectedModeRefusal(nc net.Conn) string {
	if !s.conf.protectedMode || s.conf.requirePass != "" {
		return ""
	}
	ta, ok := nc.RemoteAddr().(*net.TCPAddr)
	if !ok || ta.IP.IsLoopback() {
		return ""
	}
	return errProtectedMode
}

// blockWatch is waitBlocked's watch on the socket while a command blocks, made at the
// client's first block and kept: a consumer that blocks once per message (BRPOP, XREADGROUP
// BLOCK at light load) would otherwise allocate a 4 KiB buffer, a channel and a timer per
// message, ~4.6 KB a message and 60% of all the server's allocation in the list design, and
// run the garbage collector every ~600 messages. The buffer is reused only after the read
// into it has returned (waitBlocked receives its result first), and Feed copies it.
type blockWatch struct {
	c     *client
	buf   []byte
	done  chan watchResult
	timer *time.Timer
}

type watchResult struct {
	b   []byte
	err error
}

func (w *blockWatch) read() {
	n, err := w.c.conn.Read(w.buf)
	w.done <- watchResult{w.buf[:n], err}
}
