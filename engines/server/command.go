package server

import (
	"strings"
	"time"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// cmdFlags are a command's properties, named as in Redis's command table.
type cmdFlags uint32

const (
	flagWrite       cmdFlags = 1 << iota // modifies data: logged to the AOF, counted as dirty
	flagReadonly                         // reads data only
	flagDenyOOM                          // may grow memory
	flagAdmin                            // administrative
	flagPubSub                           // pub/sub related
	flagNoScript                         // not allowed in scripts
	flagBlocking                         // may block the client
	flagLoading                          // allowed while loading
	flagStale                            // allowed on a stale replica
	flagFast                             // O(1) or O(log N)
	flagNoAuth                           // allowed before AUTH
	flagNoMulti                          // not queued inside MULTI (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET)
	flagSubscribeOK                      // allowed in a RESP2 subscribed context
)

var flagNames = []struct {
	f    cmdFlags
	name string
}{
	{flagWrite, "write"}, {flagReadonly, "readonly"}, {flagDenyOOM, "denyoom"}, {flagAdmin, "admin"},
	{flagPubSub, "pubsub"}, {flagNoScript, "noscript"}, {flagBlocking, "blocking"},
	{flagLoading, "loading"}, {flagStale, "stale"}, {flagFast, "fast"}, {flagNoAuth, "no_auth"},
}

// handler runs a command under the store lock and returns its reply: a resp value, a plain Go
// value (see resp.AppendValue), or *blockSpec to block the client. A non-nil error is the reply.
type handler func(c *client, args [][]byte) (any, error)

// command is one entry of the command table.
type command struct {
	name     string
	arity    int // Redis's convention: N exactly, -N at least N (the name counts)
	flags    cmdFlags
	firstKey int
	lastKey  int
	step     int
	group    string // Redis's command group, for COMMAND DOCS
	summary  string
	h        handler
	subs     []*command // a container command's subcommands (XGROUP CREATE ...)

	fullname string // "xadd", "xgroup|create"
	subIndex map[string]*command
}

// commandTable is built once, in init, from the family tables in the cmd_*.go files (an init
// function because handlers such as EXEC and COMMAND look the table up).
var commandTable map[string]*command

func init() { commandTable = buildTable() }

func buildTable() map[string]*command {
	t := map[string]*command{}
	for _, family := range [][]*command{genericCommands, keyCommands, stringCommands, setHashCommands, hashCommands, setOpCommands, zsetCommands, sortCommands, functionCommands, dumpCommands, listCommands, streamCommands, pubsubCommands, connCommands, serverCommands, persistCommands} {
		for _, cmd := range family {
			cmd.fullname = cmd.name
			if len(cmd.subs) > 0 {
				cmd.subIndex = map[string]*command{}
				for _, sub := range cmd.subs {
					sub.fullname = cmd.name + "|" + sub.name
					cmd.subIndex[sub.name] = sub
				}
			}
			t[cmd.name] = cmd
		}
	}
	return t
}

// lookup finds the command for args, or the error Redis gives for an unknown command, an
// unknown subcommand or a wrong number of arguments.
func lookup(args [][]byte) (*command, error) {
	cmd := lookupName(commandTable, args[0])
	if cmd == nil {
		return nil, errUnknownCommand(args)
	}
	if len(args) > 1 && cmd.subIndex != nil {
		sub := lookupName(cmd.subIndex, args[1])
		if sub == nil {
			return nil, errUnknownSubcommand(cmd.name, args[1])
		}
		cmd = sub
	}
	if (cmd.arity > 0 && cmd.arity != len(args)) || len(args) < -cmd.arity {
		return cmd, errArity(cmd.fullname) // the command too: its rejected_calls count this
	}
	return cmd, nil
}

// lookupName finds name case-insensitively without allocating (command names are short).
func lookupName(t map[string]*command, name []byte) *command {
	var buf [32]byte
	if len(name) > len(buf) {
		return t[strings.ToLower(string(name))]
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return t[string(buf[:len(name)])]
}

// lowerASCII lower-cases a command name without allocating for already-lower names.
func lowerASCII(b []byte) string {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			return strings.ToLower(string(b))
		}
	}
	return string(b)
}

// execute runs one command and appends its reply to c.out, or returns a block to wait on.
// Store lock held.
func (c *client) execute(args [][]byte) *blockSpec {
	s := c.s
	s.stats.commandsProcessed++
	if isHTTPCommand(args[0]) {
		s.securityWarning(c)
		return nil
	}
	c.skipThis, c.skipNext = c.skipNext, false // CLIENT REPLY SKIP covers one command
	cmd, err := lookup(args)
	if err != nil {
		c.lastCmdName = ""
		c.reject(cmd, args, err, false)
		return nil
	}
	c.lastCmdName = cmd.fullname
	if !c.authed && cmd.flags&flagNoAuth == 0 {
		c.reject(cmd, args, errNoAuth, true)
		return nil
	}
	if cmd.name == "debug" && !c.allowProtected(s.cfg.EnableDebugCommand) {
		c.reject(cmd, args, redisError(errDebugNotAllowed), true)
		return nil
	}
	if c.proto == 2 && c.subscriptions() > 0 && cmd.flags&flagSubscribeOK == 0 {
		s.stats.errs.cmd(cmd).rejected++
		c.reply(errorf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", cmd.fullname))
		return nil
	}
	if err := s.p.denyWrite(cmd); err != nil {
		s.stats.errs.cmd(cmd).rejected++
		if c.inMulti {
			c.multiErr = true
		}
		c.reply(err)
		return nil
	}
	if c.inMulti && cmd.flags&flagNoMulti == 0 {
		q := make([][]byte, len(args))
		for i, a := range args {
			q[i] = append([]byte(nil), a...)
		}
		c.queued = append(c.queued, q)
		c.reply(resp.Simple("QUEUED"))
		return nil
	}
	return c.call(cmd, args)
}

// reject replies to a command refused before running (Redis's rejectCommand): it flags an open
// transaction, and a refused EXEC aborts the transaction with EXECABORT.
func (c *client) reject(cmd *command, args [][]byte, err error, withCode bool) {
	if cmd != nil {
		c.s.stats.errs.cmd(cmd).rejected++
	}
	if c.inMulti {
		c.multiErr = true
	}
	if lowerASCII(args[0]) == "exec" {
		c.inMulti, c.multiErr, c.queued = false, false, nil
		c.unwatchAll()
		msg := err.Error()
		if !withCode {
			msg = strings.TrimPrefix(msg, "ERR ")
		}
		c.reply(redisError("EXECABORT Transaction discarded because of: " + msg))
		return
	}
	c.reply(err)
}

// call runs a looked-up command (also used by EXEC). Store lock held.
func (c *client) call(cmd *command, args [][]byte) *blockSpec {
	s := c.s
	s.p.beginCmd(cmd)
	defer s.p.endCmd()
	c.logAs = nil
	s.stats.errs.beginCall()
	began := time.Now()
	v, err := cmd.h(c, args)
	if cmd.flags&flagWrite != 0 && err == nil {
		s.dirty++
		if b, ok := v.(*blockSpec); ok {
			b.args = copyArgs(args) // logged if a later write serves it
		} else if c.logAs != nil {
			s.p.logCommand(c.db, c.logAs) // a random choice is logged as its outcome
		} else {
			s.p.logCommand(c.db, args)
		}
	}
	c.logAs = nil
	var blk *blockSpec
	switch {
	case err != nil:
		c.reply(err)
	default:
		if b, ok := v.(*blockSpec); ok {
			if c.inExec {
				// Inside MULTI a blocking command cannot block: it times out at once.
				c.reply(b.timeoutReply)
			} else {
				b.cmd = cmd
				s.blocked.add(c, b)
				blk = b
			}
		} else {
			c.reply(v)
		}
	}
	if blk == nil {
		s.stats.errs.endCall(cmd, time.Since(began))
	}
	if !c.inExec {
		// Inside MULTI the blocked clients are served after EXEC, against its final state.
		s.handleReady()
	}
	return blk
}

// keyspace is the client's selected database.
func (c *client) keyspace() *store.DB { return c.s.store.DBs[c.db] }

// subscriptions counts the client's channels and patterns.
func (c *client) subscriptions() int { return len(c.channels) + len(c.patterns) }

// isHTTPCommand reports whether name is POST or Host:, the commands Redis registers only to
// catch HTTP sent to it (securityWarningCommand): a web page can make a browser send an HTTP
// request to 127.0.0.1:6379 with Redis commands in its body (cross-protocol scripting).
func isHTTPCommand(name []byte) bool {
	return strings.EqualFold(string(name), "post") || strings.EqualFold(string(name), "host:")
}

// securityWarning drops c without a reply, dropping the replies of its batch too (Redis frees
// the client asynchronously and skips writes to clients about to close), and logs at most once
// a minute so an attacker cannot flood the log.
func (s *Server) securityWarning(c *client) {
	now := time.Now()
	if now.Sub(s.lastSecurityLog) > time.Minute {
		s.logf("Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection aborted.")
		s.lastSecurityLog = now
	}
	c.closeAfter, c.abort = true, true
	c.out = c.out[:0]
}
