package server

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"qbench/engines/server/resp"
)

// settings are the CONFIG GET/SET parameters the server has, with Redis's names and defaults.
// Guarded by the store lock.
type settings struct {
	requirePass          string
	maxClients           int
	protectedMode        bool
	protoMaxBulkLen      int64
	streamNodeMaxEntries int
	streamNodeMaxBytes   int
	// client-output-buffer-limit per class (obufNormal, obufReplica, obufPubsub): normal
	// clients' replies and pub/sub subscribers' queued messages are held to theirs
	// (checkNormalLimit, checkLimitLocked); this server has no replicas.
	obuf [3]obufLimit
	// encoding thresholds, for OBJECT ENCODING
	setMaxIntsetEntries    int
	hashMaxListpackEntries int
	hashMaxListpackValue   int
	zsetMaxListpackEntries int
	zsetMaxListpackValue   int
	listMaxListpackSize    int
	// notify-keyspace-events as flags (notify.go)
	notifyFlags int
	// rdbcompression: DUMP payloads LZF-compress strings over 20 bytes, as Redis's do
	rdbCompression bool
	// accepted and reported, with no effect on this server
	other map[string]string
}

func newSettings(s *Server) *settings {
	return &settings{
		requirePass:          s.cfg.RequirePass,
		maxClients:           s.cfg.MaxClients,
		protectedMode:        true,
		protoMaxBulkLen:      resp.DefaultMaxBulkLen,
		streamNodeMaxEntries: 100,
		streamNodeMaxBytes:   4096,
		obuf: [3]obufLimit{
			obufNormal:  {0, 0, 0},
			obufReplica: {256 << 20, 64 << 20, 60},
			obufPubsub:  {32 << 20, 8 << 20, 60},
		},

		setMaxIntsetEntries:    512,
		hashMaxListpackEntries: 512,
		hashMaxListpackValue:   64,
		zsetMaxListpackEntries: 128,
		zsetMaxListpackValue:   64,
		listMaxListpackSize:    -2,
		rdbCompression:         true,
		other: map[string]string{
			"databases":                       "16",
			"maxmemory":                       "0",
			"maxmemory-policy":                "noeviction",
			"timeout":                         "0",
			"tcp-keepalive":                   "300",
			"hz":                              "10",
			"replica-serve-stale-data":        "yes",
			"replica-ignore-maxmemory":        "yes",
			"replica-lazy-flush":              "no",
			"replica-priority":                "100",
			"replica-announce-ip":             "",
			"replica-announce-port":           "0",
			"repl-ping-replica-period":        "10",
			"min-replicas-max-lag":            "10",
			"cluster-replica-no-failover":     "no",
			"cluster-replica-validity-factor": "10",
			"replicaof":                       "", // immutable: set only at start in Redis
			"list-compress-depth":             "0",
			"lazyfree-lazy-user-del":          "no",
			"slowlog-log-slower-than":         "10000",
			"slowlog-max-len":                 "128",
			"latency-tracking":                "yes",
			"busy-reply-threshold":            "5000",
			"io-threads":                      "1",
			"repl-diskless-sync":              "yes",
			"dbfilename":                      "dump.rdb",
			"appendfilename":                  "appendonly.aof",
			"loglevel":                        "notice",
			"maxmemory-samples":               "5",
			"activerehashing":                 "yes",
			"min-replicas-to-write":           "0",
			"replica-read-only":               "yes",
			"tracking-table-max-keys":         "1000000",
			"stream-node-max-entries":         "", // live values below
			// immutable (protect.go): shown with Redis's defaults, never set
			"appenddirname":         "appendonlydir",
			"enable-module-command": "no",
			"io-threads-do-reads":   "no",
			"daemonize":             "no",
			"supervised":            "no",
			"pidfile":               "",
			"logfile":               "",
			"syslog-enabled":        "no",
			"syslog-ident":          "redis",
			"syslog-facility":       "local0",
			"tcp-backlog":           "511",
			"unixsocket":            "",
			"unixsocketperm":        "0",
			"cluster-enabled":       "no",
			"cluster-port":          "0",
			"cluster-config-file":   "nodes.conf",
			"aclfile":               "",
			"always-show-logo":      "no",
			"set-proc-title":        "yes",
			"disable-thp":           "yes",
			"socket-mark-id":        "0",
			"rdbchecksum":           "yes",
			"server_cpulist":        "",
			"bio_cpulist":           "",
			"aof_rewrite_cpulist":   "",
			"bgsave_cpulist":        "",
		},
	}
}

// configAliases are Redis 7.0's old names (config.c): each reads and writes its new name.
var configAliases = map[string]string{
	"list-max-ziplist-size":         "list-max-listpack-size",
	"hash-max-ziplist-entries":      "hash-max-listpack-entries",
	"hash-max-ziplist-value":        "hash-max-listpack-value",
	"zset-max-ziplist-entries":      "zset-max-listpack-entries",
	"zset-max-ziplist-value":        "zset-max-listpack-value",
	"lua-time-limit":                "busy-reply-threshold",
	"slave-serve-stale-data":        "replica-serve-stale-data",
	"slave-read-only":               "replica-read-only",
	"slave-ignore-maxmemory":        "replica-ignore-maxmemory",
	"slave-lazy-flush":              "replica-lazy-flush",
	"slave-priority":                "replica-priority",
	"slave-announce-ip":             "replica-announce-ip",
	"slave-announce-port":           "replica-announce-port",
	"repl-ping-slave-period":        "repl-ping-replica-period",
	"min-slaves-to-write":           "min-replicas-to-write",
	"min-slaves-max-lag":            "min-replicas-max-lag",
	"cluster-slave-no-failover":     "cluster-replica-no-failover",
	"cluster-slave-validity-factor": "cluster-replica-validity-factor",
	"slaveof":                       "replicaof",
}

// get returns a parameter's value by its name or alias.
func (st *settings) get(name string, s *Server) (string, bool) {
	if real, ok := configAliases[name]; ok {
		name = real
	}
	switch name {
	case "set-max-intset-entries":
		return strconv.Itoa(st.setMaxIntsetEntries), true
	case "hash-max-listpack-entries":
		return strconv.Itoa(st.hashMaxListpackEntries), true
	case "hash-max-listpack-value":
		return strconv.Itoa(st.hashMaxListpackValue), true
	case "zset-max-listpack-entries":
		return strconv.Itoa(st.zsetMaxListpackEntries), true
	case "zset-max-listpack-value":
		return strconv.Itoa(st.zsetMaxListpackValue), true
	case "list-max-listpack-size":
		return strconv.Itoa(st.listMaxListpackSize), true
	case "notify-keyspace-events":
		return notifyFlagsString(st.notifyFlags), true
	case "requirepass":
		return st.requirePass, true
	case "enable-protected-configs":
		return protectedOption(s.cfg.EnableProtectedConfigs), true
	case "enable-debug-command":
		return protectedOption(s.cfg.EnableDebugCommand), true
	case "maxclients":
		return strconv.Itoa(st.maxClients), true
	case "protected-mode":
		return yesNo(st.protectedMode), true
	case "rdbcompression":
		return yesNo(st.rdbCompression), true
	case "proto-max-bulk-len":
		return strconv.FormatInt(st.protoMaxBulkLen, 10), true
	case "stream-node-max-entries":
		return strconv.Itoa(st.streamNodeMaxEntries), true
	case "stream-node-max-bytes":
		return strconv.Itoa(st.streamNodeMaxBytes), true
	case "client-output-buffer-limit":
		var b strings.Builder
		for i, name := range obufClassNames {
			if i > 0 {
				b.WriteByte(' ')
			}
			l := st.obuf[i]
			fmt.Fprintf(&b, "%s %d %d %d", name, l.hard, l.soft, l.secs)
		}
		return b.String(), true
	case "appendonly", "appendfsync", "save", "dir", "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size", "aof-load-truncated", "stop-writes-on-bgsave-error":
		return s.p.configGet(name)
	case "port":
		_, port, _ := strings.Cut(s.addr, ":")
		if i := strings.LastIndexByte(s.addr, ':'); i >= 0 {
			port = s.addr[i+1:]
		}
		return port, true
	case "bind":
		if i := strings.LastIndexByte(s.addr, ':'); i >= 0 {
			return s.addr[:i], true
		}
		return "", true
	}
	v, ok := st.other[name]
	return v, ok
}

// names are every parameter and alias, for CONFIG GET patterns.
func (st *settings) names() []string {
	n := []string{"requirepass", "maxclients", "protected-mode", "proto-max-bulk-len", "stream-node-max-entries",
		"stream-node-max-bytes", "client-output-buffer-limit", "port", "bind", "set-max-intset-entries",
		"hash-max-listpack-entries", "hash-max-listpack-value", "zset-max-listpack-entries", "zset-max-listpack-value",
		"list-max-listpack-size", "notify-keyspace-events", "enable-protected-configs", "enable-debug-command",
		"rdbcompression"}
	for a := range configAliases {
		n = append(n, a)
	}
	n = append(n, persistConfigNames...)
	for k := range st.other {
		if k != "stream-node-max-entries" {
			n = append(n, k)
		}
	}
	sort.Strings(n)
	return n
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// memToBytes parses Redis memory units: 1k=1000, 1kb=1024, 1m, 1mb, 1g, 1gb.
func memToBytes(s string) (int64, bool) {
	s = strings.ToLower(s)
	mul := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"b", 1}} {
		if strings.HasSuffix(s, u.suf) {
			s, mul = strings.TrimSuffix(s, u.suf), u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * mul, true
}

// obufLimit is one class's client-output-buffer-limit: past hard bytes at once, or past soft
// bytes for longer than secs seconds, the client is closed (0 = no limit).
type obufLimit struct{ hard, soft, secs int64 }

// Client classes, in the order CONFIG GET shows them.
const (
	obufNormal = iota
	obufReplica
	obufPubsub
)

var obufClassNames = [3]string{"normal", "slave", "pubsub"}

// obufClass is Redis's getClientTypeByName for the classes a limit names ("master" has none).
func obufClass(name string) int {
	switch strings.ToLower(name) {
	case "normal":
		return obufNormal
	case "slave", "replica":
		return obufReplica
	case "pubsub":
		return obufPubsub
	}
	return -1
}

// set applies one CONFIG SET; the error is Redis's.
func (st *settings) set(s *Server, name, val string) error {
	given := name
	bad := func(reason string) error {
		return errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", given, reason)
	}
	if real, ok := configAliases[name]; ok {
		name = real
	}
	// intIn parses an integer setting as Redis's numeric configs do.
	intIn := func(dst *int, lo, hi int64, memory bool) error {
		var n int64
		if memory {
			v, ok := memToBytes(val)
			if !ok {
				return bad("argument must be a memory value")
			}
			n = v
		} else {
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return bad("argument couldn't be parsed into an integer")
			}
			n = v
		}
		if n < lo || n > hi {
			return bad(fmt.Sprintf("argument must be between %d and %d inclusive", lo, hi))
		}
		*dst = int(n)
		return nil
	}
	switch name {
	case "replicaof":
		return bad("can't set immutable config")
	case "set-max-intset-entries":
		return intIn(&st.setMaxIntsetEntries, 0, math.MaxInt64, false)
	case "hash-max-listpack-entries":
		return intIn(&st.hashMaxListpackEntries, 0, math.MaxInt64, false)
	case "hash-max-listpack-value":
		return intIn(&st.hashMaxListpackValue, 0, math.MaxInt64, true)
	case "zset-max-listpack-entries":
		return intIn(&st.zsetMaxListpackEntries, 0, math.MaxInt64, false)
	case "zset-max-listpack-value":
		return intIn(&st.zsetMaxListpackValue, 0, math.MaxInt64, true)
	case "list-max-listpack-size":
		return intIn(&st.listMaxListpackSize, math.MinInt32, math.MaxInt32, false)
	case "notify-keyspace-events":
		f, ok := notifyFlagsParse(val)
		if !ok {
			return bad("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
		}
		st.notifyFlags = f
	case "requirepass":
		st.requirePass = val
	case "maxclients":
		n, err := strconv.Atoi(val)
		if err != nil {
			return bad("argument couldn't be parsed into an integer")
		}
		if n < 1 {
			return bad("argument must be between 1 and 4294967295 inclusive")
		}
		st.maxClients = n
	case "protected-mode", "rdbcompression":
		dst := &st.protectedMode
		if name == "rdbcompression" {
			dst = &st.rdbCompression
		}
		switch strings.ToLower(val) {
		case "yes":
			*dst = true
		case "no":
			*dst = false
		default:
			return bad("argument must be 'yes' or 'no'")
		}
	case "proto-max-bulk-len":
		n, ok := memToBytes(val)
		if !ok {
			return bad("argument must be a memory value")
		}
		if n < 1024*1024 {
			return bad("argument must be between 1048576 and 9223372036854775807 inclusive")
		}
		st.protoMaxBulkLen = n
	case "stream-node-max-entries":
		n, err := strconv.Atoi(val)
		if err != nil {
			return bad("argument couldn't be parsed into an integer")
		}
		if n < 0 {
			return bad("argument must be between 0 and 9223372036854775807 inclusive")
		}
		st.streamNodeMaxEntries = n
	case "stream-node-max-bytes":
		n, ok := memToBytes(val)
		if !ok {
			return bad("argument must be a memory value")
		}
		st.streamNodeMaxBytes = int(n)
	case "client-output-buffer-limit":
		// Every class is checked before any is applied, as Redis's
		// setConfigClientOutputBufferLimitOption does; "" changes nothing.
		f := strings.Fields(val)
		if len(f)%4 != 0 {
			return bad("Wrong number of arguments in buffer limit configuration.")
		}
		next := st.obuf
		for i := 0; i < len(f); i += 4 {
			class := obufClass(f[i])
			if class < 0 {
				return bad("Invalid client class specified in buffer limit configuration.")
			}
			hard, ok1 := memToBytes(f[i+1])
			soft, ok2 := memToBytes(f[i+2])
			secs, err := strconv.ParseInt(f[i+3], 10, 64)
			if !ok1 || !ok2 || err != nil || secs < 0 {
				return bad("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
			}
			next[class] = obufLimit{hard, soft, secs}
		}
		st.obuf = next
	default:
		if handled, err := s.p.configSet(name, val); handled {
			return err
		}
		if _, ok := st.other[name]; !ok {
			return errorf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", name)
		}
		st.other[name] = val
	}
	return nil
}
