package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
	"time"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

var connCommands = []*command{
	{name: "ping", arity: -1, flags: flagFast | flagSubscribeOK, group: "connection", summary: "Ping the server", h: cmdPing},
	{name: "echo", arity: 2, flags: flagFast, group: "connection", summary: "Echo the given string", h: cmdEcho},
	{name: "select", arity: 2, flags: flagLoading | flagStale | flagFast, group: "connection", summary: "Change the selected database for the current connection", h: cmdSelect},
	{name: "hello", arity: -1, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoAuth, group: "connection", summary: "Handshake with Redis", h: cmdHello},
	{name: "auth", arity: -2, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoAuth, group: "connection", summary: "Authenticate to the server", h: cmdAuth},
	{name: "quit", arity: -1, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoAuth | flagNoMulti | flagSubscribeOK, group: "connection", summary: "Close the connection", h: cmdQuit},
	{name: "reset", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoAuth | flagNoMulti | flagSubscribeOK, group: "connection", summary: "Reset the connection", h: cmdReset},
	{name: "multi", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoMulti, group: "transactions", summary: "Mark the start of a transaction block", h: cmdMulti},
	{name: "exec", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagNoMulti, group: "transactions", summary: "Execute all commands issued after MULTI", h: cmdExec},
	{name: "discard", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoMulti, group: "transactions", summary: "Discard all commands issued after MULTI", h: cmdDiscard},
	{name: "watch", arity: -2, flags: flagNoScript | flagLoading | flagStale | flagFast | flagNoMulti, firstKey: 1, lastKey: -1, step: 1, group: "transactions", summary: "Watch the given keys to determine execution of the MULTI/EXEC block", h: cmdWatch},
	{name: "unwatch", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagFast, group: "transactions", summary: "Forget about all watched keys", h: cmdUnwatch},
	{name: "client", arity: -2, group: "connection", summary: "A container for client connection commands", subs: []*command{
		{name: "id", arity: 2, flags: flagNoScript | flagLoading | flagStale, group: "connection", summary: "Returns the client ID for the current connection", h: cmdClientID},
		{name: "getname", arity: 2, flags: flagNoScript | flagLoading | flagStale, group: "connection", summary: "Get the current connection name", h: cmdClientGetname},
		{name: "setname", arity: 3, flags: flagNoScript | flagLoading | flagStale, group: "connection", summary: "Set the current connection name", h: cmdClientSetname},
		{name: "info", arity: 2, flags: flagNoScript | flagLoading | flagStale, group: "connection", summary: "Returns information about the current client connection.", h: cmdClientInfo},
		{name: "list", arity: -2, flags: flagAdmin | flagNoScript | flagLoading | flagStale, group: "connection", summary: "Get the list of client connections", h: cmdClientList},
		{name: "kill", arity: -3, flags: flagAdmin | flagNoScript | flagLoading | flagStale, group: "connection", summary: "Kill the connection of a client", h: cmdClientKill},
		{name: "no-evict", arity: 3, flags: flagAdmin | flagNoScript | flagLoading | flagStale, group: "connection", summary: "Set client eviction mode for the current connection", h: cmdClientOnOff},
		{name: "reply", arity: 3, flags: flagNoScript | flagLoading | flagStale, group: "connection", summary: "Instruct the server whether to reply to commands", h: cmdClientReply},
		{name: "unblock", arity: -3, flags: flagAdmin | flagNoScript | flagLoading | flagStale, group: "connection", summary: "Unblock a client blocked in a blocking command from a different connection", h: cmdClientUnblock},
		{name: "help", arity: 2, flags: flagLoading | flagStale, group: "connection", summary: "Show helpful text about the different subcommands", h: cmdClientHelp},
	}},
}

func cmdPing(c *client, args [][]byte) (any, error) {
	if len(args) > 2 {
		return nil, errArity("ping")
	}
	if c.proto == 2 && c.subscriptions() > 0 {
		msg := []byte{}
		if len(args) == 2 {
			msg = args[1]
		}
		return resp.Array{"pong", clone(msg)}, nil
	}
	if len(args) == 2 {
		return clone(args[1]), nil
	}
	return resp.Simple("PONG"), nil
}

func cmdEcho(c *client, args [][]byte) (any, error) { return clone(args[1]), nil }

func cmdSelect(c *client, args [][]byte) (any, error) {
	n, ok := parseInt(args[1])
	if !ok || n < math32Min || n > math32Max {
		return nil, errNotInteger
	}
	if n < 0 || n >= store.NumDBs {
		return nil, errDBIndex
	}
	c.db = int(n)
	return resp.OK, nil
}

const (
	math32Min = -1 << 31
	math32Max = 1<<31 - 1
)

// checkPassword authenticates user/pass against requirepass (the only user is "default").
func (c *client) checkPassword(user, pass []byte) bool {
	want := c.s.conf.requirePass
	if string(user) != "default" {
		return false
	}
	return want == "" || passwordMatches(pass, want)
}

// passwordMatches compares SHA-256 digests, as Redis's ACLCheckUserCredentials compares
// ACLHashPassword's with time_independent_strcmp: both sides are 32 bytes, so the constant-time
// comparison runs in full, and the time a wrong password takes tells nothing of its length or
// of a prefix it shares with the password (subtle.ConstantTimeCompare on the passwords
// themselves returns at once when their lengths differ).
func passwordMatches(pass []byte, want string) bool {
	got, exp := sha256.Sum256(pass), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(got[:], exp[:]) == 1
}

func (c *client) setAuthed(ok bool) {
	c.authed = ok
	c.rd.Unauthenticated = !ok
}

func cmdHello(c *client, args [][]byte) (any, error) {
	ver := int64(0)
	next := 1
	if len(args) >= 2 {
		n, ok := parseInt(args[1])
		if !ok {
			return nil, redisError("ERR Protocol version is not an integer or out of range")
		}
		if n < 2 || n > 3 {
			return nil, errNoProto
		}
		ver = n
		next = 2
	}
	var user, pass, name []byte
	for j := next; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case eq(args[j], "auth") && more >= 2:
			user, pass = args[j+1], args[j+2]
			j += 2
		case eq(args[j], "setname") && more > 0:
			name = args[j+1]
			if err := validateClientName(name); err != nil {
				return nil, err
			}
			j++
		default:
			return nil, errorf("ERR Syntax error in HELLO option '%s'", args[j])
		}
	}
	if user != nil {
		if !c.checkPassword(user, pass) {
			return nil, errWrongPass
		}
		c.setAuthed(true)
	}
	if !c.authed {
		return nil, redisError("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
	}
	if name != nil {
		c.name = string(name)
	}
	if ver != 0 {
		c.proto = int(ver)
	}
	return resp.Map{
		"server", "redis",
		"version", RedisVersion,
		"proto", c.proto,
		"id", c.id,
		"mode", "standalone",
		"role", "master",
		"modules", resp.Array{},
	}, nil
}

func cmdAuth(c *client, args [][]byte) (any, error) {
	if len(args) > 3 {
		return nil, errSyntax
	}
	user, pass := []byte("default"), args[1]
	if len(args) == 2 {
		if c.s.conf.requirePass == "" {
			return nil, errAuthNotSet
		}
	} else {
		user, pass = args[1], args[2]
	}
	if !c.checkPassword(user, pass) {
		return nil, errWrongPass
	}
	c.setAuthed(true)
	return resp.OK, nil
}

func cmdQuit(c *client, args [][]byte) (any, error) {
	c.closeAfter = true
	return resp.OK, nil
}

func cmdReset(c *client, args [][]byte) (any, error) {
	c.inMulti, c.multiErr, c.queued = false, false, nil
	c.unwatchAll()
	c.s.pubsub.unsubscribeAll(c)
	c.db = 0
	c.proto = 2
	c.name = ""
	if c.s.conf.requirePass != "" {
		c.setAuthed(false)
	}
	return resp.Simple("RESET"), nil
}

func cmdMulti(c *client, args [][]byte) (any, error) {
	if c.inMulti {
		return nil, errMultiNested
	}
	c.inMulti, c.multiErr, c.queued = true, false, nil
	return resp.OK, nil
}

func cmdDiscard(c *client, args [][]byte) (any, error) {
	if !c.inMulti {
		return nil, errDiscardNoMulti
	}
	c.inMulti, c.multiErr, c.queued = false, false, nil
	c.unwatchAll()
	return resp.OK, nil
}

// cmdExec runs the queued commands; their replies form one array reply.
func cmdExec(c *client, args [][]byte) (any, error) {
	if !c.inMulti {
		return nil, errExecNoMulti
	}
	queued, aborted, dirty := c.queued, c.multiErr, c.dirtyCAS
	c.inMulti, c.multiErr, c.queued = false, false, nil
	c.unwatchAll()
	if aborted {
		return nil, errExecAbort
	}
	if dirty {
		return resp.NullArray, nil
	}
	saved := c.out
	c.out = resp.AppendArrayLen(nil, len(queued))
	c.inExec = true
	for _, q := range queued {
		cmd, err := lookup(q)
		if err != nil {
			c.reply(err)
			continue
		}
		c.call(cmd, q)
	}
	c.inExec = false
	body := c.out
	c.out = saved
	return resp.Raw(body), nil
}

func validateClientName(name []byte) error {
	for _, ch := range name {
		if ch < '!' || ch > '~' {
			return redisError("ERR Client names cannot contain spaces, newlines or special characters.")
		}
	}
	return nil
}

func cmdClientID(c *client, args [][]byte) (any, error) { return c.id, nil }

func cmdClientGetname(c *client, args [][]byte) (any, error) {
	if c.name == "" {
		return nil, nil
	}
	return c.name, nil
}

func cmdClientSetname(c *client, args [][]byte) (any, error) {
	if err := validateClientName(args[2]); err != nil {
		return nil, err
	}
	c.name = string(args[2])
	return resp.OK, nil
}

// info is one CLIENT LIST line, in Redis 7.0's format.
func (c *client) info() string {
	now := time.Now()
	flags := ""
	if c.inMulti {
		flags += "x"
	}
	if c.blockedOn != nil {
		flags += "b"
	}
	if c.subscriptions() > 0 {
		flags += "P"
	}
	if flags == "" {
		flags = "N"
	}
	multi := -1
	if c.inMulti {
		multi = len(c.queued)
	}
	cmd := c.lastCmdName
	if cmd == "" {
		cmd = "NULL"
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=0 multi=%d qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=16384 rbp=0 obl=0 oll=0 omem=%d tot-mem=%d events=r cmd=%s user=default redir=-1 resp=%d",
		c.id, c.conn.RemoteAddr(), c.conn.LocalAddr(), 8+c.id, c.name,
		int64(now.Sub(c.created).Seconds()), int64(now.Sub(c.lastCmd).Seconds()), flags, c.db,
		len(c.channels), len(c.patterns), multi, c.pendingBytes(), 20000+c.pendingBytes(), cmd, c.proto)
}

func cmdClientInfo(c *client, args [][]byte) (any, error) {
	return resp.Verbatim(c.info() + "\n"), nil
}

func cmdClientList(c *client, args [][]byte) (any, error) {
	var ids []int64
	if len(args) > 2 {
		switch {
		case eq(args[2], "id") && len(args) > 3:
			for _, a := range args[3:] {
				n, ok := parseInt(a)
				if !ok || n <= 0 {
					return nil, redisError("ERR Invalid client ID")
				}
				ids = append(ids, n)
			}
		case eq(args[2], "type") && len(args) == 4:
			t := lowerASCII(args[3])
			if t != "normal" && t != "pubsub" && t != "master" && t != "replica" && t != "slave" {
				return nil, errorf("ERR Unknown client type '%s'", args[3])
			}
		default:
			return nil, errSyntax
		}
	}
	var b strings.Builder
	for _, id := range c.s.sortedClientIDs() {
		if ids != nil && !containsID(ids, id) {
			continue
		}
		b.WriteString(c.s.clients[id].info())
		b.WriteByte('\n')
	}
	return resp.Verbatim(b.String()), nil
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func (s *Server) sortedClientIDs() []int64 {
	ids := make([]int64, 0, len(s.clients))
	for id := range s.clients {
		ids = append(ids, id)
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}

func cmdClientKill(c *client, args [][]byte) (any, error) {
	if len(args) == 3 {
		// Old form: CLIENT KILL addr:port.
		for _, id := range c.s.sortedClientIDs() {
			o := c.s.clients[id]
			if o.conn.RemoteAddr().String() == string(args[2]) {
				c.s.killClient(c, o)
				return resp.OK, nil
			}
		}
		return nil, redisError("ERR No such client")
	}
	var id int64
	addr, laddr, typ, user := "", "", "", ""
	skipMe := true
	if (len(args)-2)%2 != 0 {
		return nil, errSyntax
	}
	for i := 2; i+1 < len(args); i += 2 {
		v := args[i+1]
		switch {
		case eq(args[i], "id"):
			n, ok := parseInt(v)
			if !ok || n <= 0 {
				return nil, redisError("ERR client-id should be greater than 0")
			}
			id = n
		case eq(args[i], "addr"):
			addr = string(v)
		case eq(args[i], "laddr"):
			laddr = string(v)
		case eq(args[i], "skipme"):
			switch {
			case eq(v, "yes"):
				skipMe = true
			case eq(v, "no"):
				skipMe = false
			default:
				return nil, errSyntax
			}
		case eq(args[i], "type"):
			typ = lowerASCII(v)
			if typ != "normal" && typ != "pubsub" && typ != "master" && typ != "replica" && typ != "slave" {
				return nil, errorf("ERR Unknown client type '%s'", v)
			}
		case eq(args[i], "user"):
			user = string(v)
			if user != "default" {
				return nil, errorf("ERR No such user '%s'", v)
			}
		default:
			return nil, errSyntax
		}
	}
	killed := 0
	for _, cid := range c.s.sortedClientIDs() {
		o := c.s.clients[cid]
		if id != 0 && o.id != id {
			continue
		}
		if addr != "" && o.conn.RemoteAddr().String() != addr {
			continue
		}
		if laddr != "" && o.conn.LocalAddr().String() != laddr {
			continue
		}
		if o == c && skipMe {
			continue
		}
		if typ != "" {
			isPubSub := o.subscriptions() > 0
			if (typ == "pubsub") != isPubSub || typ == "master" || typ == "replica" || typ == "slave" {
				continue
			}
		}

		c.s.killClient(c, o)
		killed++
	}
	return killed, nil
}

// killClient closes o's connection; the caller itself is closed after its reply.
func (s *Server) killClient(caller, o *client) {
	if o == caller {
		o.closeAfter = true
		return
	}
	o.conn.Close()
}

func cmdClientOnOff(c *client, args [][]byte) (any, error) {
	if !eq(args[2], "on") && !eq(args[2], "off") {
		return nil, errSyntax
	}
	return resp.OK, nil
}

// cmdClientReply is CLIENT REPLY: OFF drops every reply (its own too) until ON; SKIP drops its
// own reply and the next command's.
func cmdClientReply(c *client, args [][]byte) (any, error) {
	switch {
	case eq(args[2], "on"):
		c.replyOff, c.skipThis, c.skipNext = false, false, false
		return resp.OK, nil
	case eq(args[2], "off"):
		c.replyOff = true
		return resp.OK, nil
	case eq(args[2], "skip"):
		if !c.replyOff {
			c.skipThis, c.skipNext = true, true
		}
		return resp.OK, nil
	}
	return nil, errSyntax
}

// cmdClientUnblock answers a client blocked in a blocking command as if it timed out, or with
// an error.
func cmdClientUnblock(c *client, args [][]byte) (any, error) {
	id, ok := parseInt(args[2])
	if !ok {
		return nil, errNotInteger
	}
	var err error
	if len(args) == 4 {
		switch {
		case eq(args[3], "timeout"):
		case eq(args[3], "error"):
			err = redisError("UNBLOCKED client unblocked via CLIENT UNBLOCK")
		default:
			return nil, redisError("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
		}
	} else if len(args) > 4 {
		return nil, errSyntax
	}
	o := c.s.clients[id]
	if o == nil || !c.s.unblock(o, err) {
		return 0, nil
	}
	return 1, nil
}

func cmdClientHelp(c *client, args [][]byte) (any, error) {
	return helpReply("CLIENT",
		"ID", "    Return the ID of the current connection.",
		"INFO", "    Return information about the current client connection.",
		"GETNAME", "    Return the name of the current connection.",
		"KILL <ip:port>", "    Kill connection made from <ip:port>.",
		"LIST [options ...]", "    Return information about client connections.",
		"SETNAME <name>", "    Assign the name <name> to the current connection.",
	), nil
}
