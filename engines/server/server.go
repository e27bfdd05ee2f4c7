// Package server is qbench's in-repo Redis 7.0-compatible server: strings, lists, streams,
// pub/sub, sets, hashes, sorted sets, transactions and keyspace notifications, with an
// append-only file and snapshots (persist*.go), DUMP/RESTORE and dump.rdb seeding.
//
// The protocol lives in package resp, the data in package store; this package holds the
// connection layer, the command table and the handlers. Every command runs under one lock
// (Redis is single-threaded too). On Linux one event loop (evloop_linux.go) serves the clients:
// a turn reads every ready socket, runs everything received under one hold of the lock,
// group-commits the append-only file once, then writes the replies. Blocked clients (BLMPOP,
// XREADGROUP BLOCK) and subscribers stay in the loop, answered in the turn that wakes them. A
// client whose socket cannot take its replies at once moves to a goroutine of its own
// (conn.go), which reads every command already buffered, executes them, commits, then flushes;
// off Linux every client is served that way.
package server

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"qbench/engines/server/fsys"
	"qbench/engines/server/store"
)

// RedisVersion is the Redis version whose behaviour the server reproduces.
const RedisVersion = "7.0.15"

// Version is the Redis version we emulate plus our own suffix.
func Version() string { return RedisVersion + "-qbench" }

// Config configures a Server. Zero values mean defaults, filled in by New.
type Config struct {
	Addr        string                           // listen address; "" means "127.0.0.1:0"
	RequirePass string                           // "" = no password
	MaxClients  int                              // 0 = 10000
	Logf        func(format string, args ...any) // nil = silent

	// Persistence (see persist.go and README.md), named as Redis names the settings.
	Dir         string // "dir": where dump.qdb and appendonlydir live; "" = "."
	AppendOnly  bool   // "appendonly"
	AppendFsync string // "appendfsync": "always", "everysec" (the default, "") or "no"
	// AOFPreallocate is qbench's own (Redis has no such setting): "yes" (the default, "")
	// keeps synced zeros written ahead of the log where the file system allows, so a commit's
	// fdatasync has no size change to journal (aof/writer_prealloc.go); "no" appends as Redis
	// does, growing the file with every write.
	AOFPreallocate string
	Save           string // "save" rules, e.g. "3600 1 300 100"; "" = no automatic snapshots
	// StopWritesOnBgsaveError is Redis's stop-writes-on-bgsave-error: "yes" (the default, "")
	// refuses write commands with -MISCONF while save rules are set and the last background
	// save failed; "no" keeps taking them.
	StopWritesOnBgsaveError string
	FS                      fsys.FS // nil = the real file system; *fsys.Sim to simulate power loss
	// SeedRDB is a dump.rdb written by Redis (6.x or 7.0) that the dataset starts from when Dir
	// holds no snapshot and no AOF (persist_seed.go); "" = none. Read from the real file system.
	SeedRDB string

	// Redis 7.0's protected actions (protect.go): "no" (the default, ""), "yes" or "local".
	EnableProtectedConfigs string // CONFIG SET dir / dbfilename
	EnableDebugCommand     string // DEBUG

	// GoroutinePerConn serves every connection on its own goroutine instead of the event loop
	// (evloop_linux.go; always so off Linux).
	GoroutinePerConn bool
	// LoopSpin caps the event loop's adaptive poll before it blocks (evloop_linux.go, loopSpin):
	// 0 = QBENCH_SERVER_LOOP_SPIN_US or the default, < 0 = off.
	LoopSpin time.Duration
}

// Server is one server instance.
type Server struct {
	cfg Config

	// mu is the store lock: every command, and Stall, holds it.
	mu    sync.Mutex
	store *store.Store
	conf  *settings

	// woken counts the client goroutines commands have readied (a blocked client answered, a
	// subscriber's writer given a message) since the event loop last looked; under mu.
	woken int

	clients map[int64]*client
	nextID  atomic.Int64
	blocked *blockRegistry
	// watchers are the clients WATCHing each key.
	watchers map[dbKey][]*client
	pubsub   *pubsubRegistry

	loop    *eventLoop // nil: every connection on its own goroutine
	ln      net.Listener
	addr    string
	closing chan struct{}
	closed  sync.Once
	wg      sync.WaitGroup

	started   time.Time
	stats     stats
	dirty     int64 // writes since start (INFO persistence rdb_changes_since_last_save)
	runID     string
	connMu    sync.Mutex // guards conns, which Close uses without the store lock
	conns     map[net.Conn]struct{}
	isClosing atomic.Bool
	p         *persistence
	cfgErr    error
	// cron goroutine only (memory_release.go): the command count it last saw, since when it has
	// not moved, and the count at the last release
	cronCmds, releasedAt int64
	cronIdleSince        time.Time
	// noActiveExpire is DEBUG SET-ACTIVE-EXPIRE 0: keys expire only when read.
	noActiveExpire bool

	lastSecurityLog time.Time // store lock; see securityWarning

	fatalMu  sync.Mutex
	fatalErr error // why the server stopped itself (AOF error under always)
}

type stats struct {
	connectionsReceived int64
	commandsProcessed   int64
	rejectedConns       int64
	netInput, netOutput atomic.Int64
	keyspaceHits        int64
	keyspaceMisses      int64
	errs                errorStats // commandstats, errorstats (cmdstats.go)
}

// New returns a server with cfg's defaults filled in.
func New(cfg Config) *Server {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.MaxClients == 0 {
		cfg.MaxClients = 10000
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	cfgErr := persistDefaults(&cfg)
	for _, o := range [][2]string{{"enable-protected-configs", cfg.EnableProtectedConfigs}, {"enable-debug-command", cfg.EnableDebugCommand}} {
		if err := checkProtectedOption(o[0], o[1]); err != nil && cfgErr == nil {
			cfgErr = err
		}
	}
	s := &Server{
		cfg:      cfg,
		store:    store.New(),
		clients:  map[int64]*client{},
		blocked:  newBlockRegistry(),
		watchers: map[dbKey][]*client{},
		pubsub:   newPubsubRegistry(),
		closing:  make(chan struct{}),
		conns:    map[net.Conn]struct{}{},
		runID:    randomHex(40),
	}
	s.conf = newSettings(s)
	s.store.OnExpired = s.onExpired
	s.p = newPersistence(s)
	if cfgErr != nil {
		s.cfgErr = &ConfigError{cfgErr}
	}
	return s
}

// ConfigError is Start's error for a Config value it refuses (appendfsync, aof-preallocate,
// save, the enable-* options): the caller's input, where other Start errors are the machine's
// or the data's.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Start listens and serves in background goroutines.
func (s *Server) Start() error {
	if s.cfgErr != nil {
		return s.cfgErr
	}
	n, err := adjustOpenFilesLimit(s.cfg.MaxClients, s.logf)
	if err != nil {
		s.logf("%v", err)
		return err
	}
	s.mu.Lock()
	s.conf.maxClients = n
	s.mu.Unlock()
	if err := s.p.load(); err != nil {
		return err
	}
	ln, err := net.Listen(listenNetwork(s.cfg.Addr), s.cfg.Addr)
	if err != nil {
		return err
	}
	s.ln = ln
	s.addr = ln.Addr().String()
	s.started = time.Now()
	if !s.cfg.GoroutinePerConn {
		s.loop = startEventLoop(s)
	}
	s.cfg.Logf("qbench server %s listening on %s", Version(), s.addr)
	s.wg.Add(1)
	go s.acceptLoop()
	s.wg.Add(1)
	go s.cronLoop()
	s.wg.Add(1)
	go s.p.cron()
	return nil
}

// listenNetwork is "tcp4" for an IPv4 literal and "tcp6" for an IPv6 one: Go's "tcp" on
// 0.0.0.0 opens a dual-stack socket that also accepts IPv6, which is not what --bind 0.0.0.0
// says (Redis binds exactly the addresses given). Names and empty hosts keep "tcp".
func listenNetwork(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "tcp"
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.To4() != nil {
			return "tcp4"
		}
		return "tcp6"
	}
	return "tcp"
}

// Addr is the listening address ("127.0.0.1:port") once started.
func (s *Server) Addr() string { return s.addr }

// Close stops listening, closes all connections and waits for the server's goroutines.
func (s *Server) Close() error {
	var err error
	s.closed.Do(func() {
		s.isClosing.Store(true)
		close(s.closing)
		if s.loop != nil {
			s.loop.wake()
		}
		if s.ln != nil {
			err = s.ln.Close()
		}
		s.connMu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.connMu.Unlock()
		s.wg.Wait()
		if perr := s.p.close(); perr != nil && err == nil {
			err = perr
		}
	})
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Stall makes the server stop answering every client for d (as DEBUG SLEEP does). It returns
// once the stall has begun.
func (s *Server) Stall(d time.Duration) {
	begun := make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.mu.Lock()
		close(begun)
		s.sleepLocked(d)
		s.mu.Unlock()
	}()
	<-begun
}

// sleepLocked sleeps for d holding the store lock, ending early if the server closes.
func (s *Server) sleepLocked(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.closing:
	}
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var delay time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.isClosing.Load() {
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Anything else is temporary as far as the server can tell: EMFILE/ENFILE (out of
			// descriptors until some client leaves), ENOBUFS, ECONNABORTED. Redis logs it and
			// accepts again on the next event; here: log once per episode, back off up to 1 s.
			if delay == 0 {
				s.cfg.Logf("Accepting client connection: %v", err)
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(delay):
			case <-s.closing:
				return
			}
			continue
		}
		delay = 0
		s.connMu.Lock()
		if s.isClosing.Load() {
			s.connMu.Unlock()
			nc.Close()
			return
		}
		s.conns[nc] = struct{}{}
		s.connMu.Unlock()
		if s.loop != nil && s.loop.adopt(nc) {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.forgetConn(nc)
			s.serveConn(nc)
		}()
	}
}

// forgetConn drops a closed connection from the set Close closes.
func (s *Server) forgetConn(nc net.Conn) {
	s.connMu.Lock()
	delete(s.conns, nc)
	s.connMu.Unlock()
}

// cronLoop does Redis's periodic work: it evicts slow pub/sub clients, expires keys, and
// returns memory freed in bulk to the OS.
func (s *Server) cronLoop() {
	defer s.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case now := <-t.C:
			s.checkOutputLimits()
			s.activeExpire()
			s.releaseIfIdle(now) // memory_release.go
		}
	}
}

// activeExpire removes expired keys nobody reads, as Redis's expire cycle does: sample 20 keys
// with a TTL per database and repeat while more than a quarter were expired, within 1ms.
func (s *Server) activeExpire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noActiveExpire {
		return
	}
	start := time.Now()
	for _, db := range s.store.DBs {
		for db.ExpiresLen() > 0 && time.Since(start) < time.Millisecond {
			checked, deleted := db.ExpireSome(20)
			if deleted*4 <= checked {
				break
			}
		}
	}
	s.handleReady() // an expired stream wakes the XREADGROUPs blocked on it
}

func (s *Server) logf(format string, args ...any) { s.cfg.Logf(format, args...) }
