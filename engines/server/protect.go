package server

import (
	"fmt"
	"net"
	"strings"
)

// Redis 7.0's protected actions: enable-protected-configs (CONFIG SET of dir and dbfilename,
// which would let a client write a file anywhere: the classic "CONFIG SET dir /root/.ssh"
// attack) and enable-debug-command (DEBUG, which can stall every client). Each is "no" (the
// default), "yes", or "local" (allowed from loopback connections only). Both are set at start
// and cannot be changed at run time.

// protectedConfigs are the settings CONFIG SET refuses unless enable-protected-configs allows.
var protectedConfigs = map[string]bool{"dir": true, "dbfilename": true}

// immutableConfigs are settings fixed at start: Redis 7.0.15's IMMUTABLE_CONFIG ones (config.c;
// each refused by redis-server's CONFIG SET with "can't set immutable config"), aliases included.
// appendfilename and appenddirname among them: a client cannot point the log elsewhere.
var immutableConfigs = map[string]bool{
	"enable-protected-configs": true, "enable-debug-command": true, "enable-module-command": true,
	"appendfilename": true, "appenddirname": true, "databases": true, "io-threads": true,
	"io-threads-do-reads": true, "replicaof": true, "slaveof": true, "daemonize": true, "supervised": true,
	"pidfile": true, "logfile": true, "syslog-enabled": true, "syslog-ident": true, "syslog-facility": true,
	"tcp-backlog": true, "unixsocket": true, "unixsocketperm": true, "cluster-enabled": true,
	"cluster-port": true, "cluster-config-file": true, "aclfile": true, "always-show-logo": true,
	"set-proc-title": true, "disable-thp": true, "socket-mark-id": true, "rdbchecksum": true,
	"server_cpulist": true, "bio_cpulist": true, "aof_rewrite_cpulist": true, "bgsave_cpulist": true,
}

const errDebugNotAllowed = `ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`

// checkProtectedOption validates an enable-* value ("" means "no").
func checkProtectedOption(name, v string) error {
	switch strings.ToLower(v) {
	case "", "no", "yes", "local":
		return nil
	}
	return fmt.Errorf("%s %q: must be no, yes or local", name, v)
}

func protectedOption(v string) string {
	if v == "" {
		return "no"
	}
	return strings.ToLower(v)
}

// allowProtected is Redis's allowProtectedAction.
func (c *client) allowProtected(option string) bool {
	switch protectedOption(option) {
	case "yes":
		return true
	case "local":
		return c.isLocal()
	}
	return false
}

// isLocal is Redis's islocalClient: a loopback peer.
func (c *client) isLocal() bool {
	if c.conn == nil {
		return true
	}
	a, ok := c.conn.RemoteAddr().(*net.TCPAddr)
	return !ok || a.IP.IsLoopback()
}

// configSetRefusal checks every name of a CONFIG SET before any is applied, as Redis does.
func (c *client) configSetRefusal(args [][]byte) error {
	for i := 2; i+1 < len(args); i += 2 {
		name := strings.ToLower(string(args[i]))
		reason := ""
		switch {
		case immutableConfigs[name]:
			reason = "can't set immutable config"
		case protectedConfigs[name] && !c.allowProtected(c.s.cfg.EnableProtectedConfigs):
			reason = "can't set protected config"
		}
		if reason != "" {
			return errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", string(args[i]), reason)
		}
	}
	return nil
}
