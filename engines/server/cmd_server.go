package server

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

var serverCommands = []*command{
	{name: "info", arity: -1, flags: flagLoading | flagStale, group: "server", summary: "Get information and statistics about the server", h: cmdInfo},
	{name: "debug", arity: -2, flags: flagAdmin | flagNoScript | flagLoading | flagStale, group: "server", summary: "A container for debugging commands", h: cmdDebug},
	{name: "flushall", arity: -1, flags: flagWrite, group: "server", summary: "Remove all keys from all databases", h: cmdFlush(true)},
	{name: "flushdb", arity: -1, flags: flagWrite, group: "server", summary: "Remove all keys from the current database", h: cmdFlush(false)},
	{name: "time", arity: 1, flags: flagLoading | flagStale | flagFast, group: "server", summary: "Return the current server time", h: cmdTime},
	{name: "lastsave", arity: 1, flags: flagLoading | flagStale | flagFast, group: "server", summary: "Get the UNIX time stamp of the last successful save to disk", h: cmdLastsaveP},
	{name: "wait", arity: 3, flags: flagNoScript, group: "generic", summary: "Wait for the synchronous replication of all the write commands sent in the context of the current connection", h: cmdWait},
	// WAITAOF is Redis 7.2's; it is here because clients of the future AOF will call it.
	{name: "waitaof", arity: 4, flags: flagNoScript, group: "generic", summary: "Wait for all write commands sent in the context of the current connection to be synced to AOF of local host and/or replicas", h: cmdWaitaof},
	{name: "shutdown", arity: -1, flags: flagAdmin | flagNoScript | flagLoading | flagStale | flagNoMulti, group: "server", summary: "Synchronously save the dataset to disk and then shut down the server", h: cmdShutdown},
	{name: "config", arity: -2, group: "server", summary: "A container for server configuration commands", subs: []*command{
		{name: "get", arity: -3, flags: flagAdmin | flagNoScript | flagLoading | flagStale, group: "server", summary: "Get the values of configuration parameters", h: cmdConfigGet},
		{name: "set", arity: -4, flags: flagAdmin | flagNoScript | flagLoading | flagStale, group: "server", summary: "Set configuration parameters to the given values", h: cmdConfigSet},
		{name: "resetstat", arity: 2, flags: flagAdmin | flagNoScript | flagLoading | flagStale, group: "server", summary: "Reset the stats returned by INFO", h: cmdConfigResetstat},
		{name: "rewrite", arity: 2, flags: flagAdmin | flagNoScript | flagLoading | flagStale, group: "server", summary: "Rewrite the configuration file with the in memory configuration", h: cmdConfigRewrite},
		{name: "help", arity: 2, flags: flagLoading | flagStale, group: "server", summary: "Show helpful text about the different subcommands", h: cmdConfigHelp},
	}},
	{name: "command", arity: -1, flags: flagLoading | flagStale, group: "server", summary: "Get array of Redis command details", h: cmdCommandAll, subs: []*command{
		{name: "count", arity: 2, flags: flagLoading | flagStale, group: "server", summary: "Get total number of Redis commands", h: cmdCommandCount},
		{name: "info", arity: -2, flags: flagLoading | flagStale, group: "server", summary: "Get array of specific Redis command details, or all when no argument is given.", h: cmdCommandInfo},
		{name: "docs", arity: -2, flags: flagLoading | flagStale, group: "server", summary: "Get array of specific Redis command documentation", h: cmdCommandDocs},
		{name: "list", arity: -2, flags: flagLoading | flagStale, group: "server", summary: "Get an array of Redis command names", h: cmdCommandList},
		{name: "getkeys", arity: -4, flags: flagLoading | flagStale, group: "server", summary: "Extract keys given a full Redis command", h: cmdCommandGetkeys},
		{name: "help", arity: 2, flags: flagLoading | flagStale, group: "server", summary: "Show helpful text about the different subcommands", h: cmdCommandHelp},
	}},
	{name: "memory", arity: -2, group: "server", summary: "A container for memory diagnostics commands", subs: []*command{
		{name: "usage", arity: -3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, group: "server", summary: "Estimate the memory usage of a key", h: cmdMemoryUsage},
		{name: "stats", arity: 2, group: "server", summary: "Show memory usage details", h: cmdMemoryStats},
		{name: "help", arity: 2, flags: flagLoading | flagStale, group: "server", summary: "Show helpful text about the different subcommands", h: cmdMemoryHelp},
	}},
}

// timeDurationMs converts milliseconds to a Duration.
func timeDurationMs(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func cmdDebug(c *client, args [][]byte) (any, error) {
	switch {
	case eq(args[1], "sleep") && len(args) == 3:
		f, ok := parseFloat(args[2])
		if !ok {
			return nil, errNotFloat
		}
		c.s.sleepLocked(time.Duration(f * float64(time.Second)))
		return resp.OK, nil
	case eq(args[1], "help"):
		return helpReply("DEBUG", "SLEEP <seconds>", "    Stop the server for <seconds>. Decimals allowed."), nil
	}
	if v, err, ok := debugMore(c, args); ok { // cmd_debug.go
		return v, err
	}
	return nil, errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP.", args[1])
}

func cmdFlush(all bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		if len(args) > 2 || (len(args) == 2 && !eq(args[1], "sync") && !eq(args[1], "async")) {
			return nil, errSyntax
		}
		if all {
			for i := range c.s.store.DBs {
				c.s.touchAllInDB(i)
				c.s.signalDB(i, readyGone)
			}
			c.s.store.FlushAll()
		} else {
			c.s.touchAllInDB(c.db)
			c.s.signalDB(c.db, readyGone)
			c.keyspace().Flush()
		}
		return resp.OK, nil
	}
}

func cmdTime(c *client, args [][]byte) (any, error) {
	now := time.Now()
	return resp.Array{strconv.FormatInt(now.Unix(), 10), strconv.FormatInt(int64(now.Nanosecond()/1000), 10)}, nil
}

// cmdWait answers that no replica acknowledged: the server has no replicas.
func cmdWait(c *client, args [][]byte) (any, error) {
	if _, ok := parseInt(args[1]); !ok {
		return nil, errNotInteger
	}
	if _, err := parseTimeoutMs(args[2]); err != nil {
		return nil, err
	}
	return 0, nil
}

// cmdWaitaof answers as Redis 7.2 does without an AOF and without replicas.
func cmdWaitaof(c *client, args [][]byte) (any, error) {
	local, ok := parseInt(args[1])
	if !ok || local < 0 {
		return nil, errNotInteger
	}
	if _, ok := parseInt(args[2]); !ok {
		return nil, errNotInteger
	}
	if _, err := parseTimeoutMs(args[3]); err != nil {
		return nil, err
	}
	if local > 0 && c.s.p.w == nil {
		return nil, redisError("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.")
	}
	return c.s.p.waitAOF()
}

func cmdShutdown(c *client, args [][]byte) (any, error) {
	for _, a := range args[1:] {
		if !eq(a, "nosave") && !eq(a, "save") && !eq(a, "now") && !eq(a, "force") && !eq(a, "abort") {
			return nil, errSyntax
		}
	}
	c.s.logf("SHUTDOWN requested by client %d", c.id)
	go c.s.Close()
	c.closeAfter = true
	return resp.Raw(nil), nil
}

func cmdConfigGet(c *client, args [][]byte) (any, error) {
	st := c.s.conf
	seen := map[string]bool{}
	out := resp.Map{}
	for _, p := range args[2:] {
		pat := strings.ToLower(string(p))
		for _, name := range st.names() {
			if seen[name] || !globMatch(pat, name) {
				continue
			}
			v, _ := st.get(name, c.s)
			seen[name] = true
			out = append(out, name, v)
		}
	}
	return out, nil
}

func cmdConfigSet(c *client, args [][]byte) (any, error) {
	if (len(args)-2)%2 != 0 {
		return nil, errArity("config|set")
	}
	if err := c.configSetRefusal(args); err != nil {
		return nil, err
	}
	for i := 2; i+1 < len(args); i += 2 {
		if err := c.s.conf.set(c.s, strings.ToLower(string(args[i])), string(args[i+1])); err != nil {
			return nil, err
		}
	}
	return resp.OK, nil
}

func cmdConfigResetstat(c *client, args [][]byte) (any, error) {
	s := c.s
	s.stats.commandsProcessed = 0
	s.stats.connectionsReceived = 0
	s.stats.rejectedConns = 0
	s.stats.keyspaceHits, s.stats.keyspaceMisses = 0, 0
	s.stats.errs.reset()
	s.stats.netInput.Store(0)
	s.stats.netOutput.Store(0)
	return resp.OK, nil
}

func cmdConfigRewrite(c *client, args [][]byte) (any, error) {
	return nil, redisError("ERR The server is running without a config file")
}

func cmdConfigHelp(c *client, args [][]byte) (any, error) {
	return helpReply("CONFIG",
		"GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>", "    Set the configuration <directive> to <value>.",
		"RESETSTAT", "    Reset statistics reported by the INFO command.",
		"REWRITE", "    Rewrite the configuration file.",
	), nil
}

// commandInfo is one COMMAND INFO entry in Redis 7.0's shape.
func commandInfo(cmd *command) resp.Array {
	flags := resp.Set{}
	for _, f := range flagNames {
		if cmd.flags&f.f != 0 {
			flags = append(flags, resp.Simple(f.name))
		}
	}
	subs := resp.Array{}
	for _, sub := range cmd.subs {
		subs = append(subs, commandInfo(sub))
	}
	return resp.Array{
		cmd.fullname, cmd.arity, flags, cmd.firstKey, cmd.lastKey, cmd.step,
		resp.Set{resp.Simple("@" + cmd.group)}, resp.Set{}, resp.Array{}, subs,
	}
}

func cmdCommandAll(c *client, args [][]byte) (any, error) {
	if len(args) > 1 {
		return nil, errUnknownSubcommand("command", args[1])
	}
	out := resp.Array{}
	for _, name := range sortedCommandNames() {
		out = append(out, commandInfo(commandTable[name]))
	}
	return out, nil
}

func sortedCommandNames() []string {
	names := make([]string, 0, len(commandTable))
	for n := range commandTable {
		names = append(names, n)
	}
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && names[j] < names[j-1]; j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
	return names
}

func cmdCommandCount(c *client, args [][]byte) (any, error) { return len(commandTable), nil }

// findCommand resolves "xadd" or "xgroup|create".
func findCommand(name string) *command {
	name = strings.ToLower(name)
	base, sub, hasSub := strings.Cut(name, "|")
	cmd := commandTable[base]
	if cmd == nil || !hasSub {
		return cmd
	}
	return cmd.subIndex[sub]
}

func cmdCommandInfo(c *client, args [][]byte) (any, error) {
	if len(args) == 2 {
		return cmdCommandAll(c, args[:1])
	}
	out := resp.Array{}
	for _, a := range args[2:] {
		if cmd := findCommand(string(a)); cmd != nil {
			out = append(out, commandInfo(cmd))
		} else {
			out = append(out, resp.NullArray)
		}
	}
	return out, nil
}

func commandDoc(cmd *command) resp.Map {
	doc := resp.Map{"summary", cmd.summary, "since", "1.0.0", "group", cmd.group}
	if len(cmd.subs) > 0 {
		subs := resp.Map{}
		for _, sub := range cmd.subs {
			subs = append(subs, sub.fullname, commandDoc(sub))
		}
		doc = append(doc, "subcommands", subs)
	}
	return doc
}

func cmdCommandDocs(c *client, args [][]byte) (any, error) {
	out := resp.Map{}
	names := []string{}
	if len(args) == 2 {
		names = sortedCommandNames()
	} else {
		for _, a := range args[2:] {
			names = append(names, string(a))
		}
	}
	for _, n := range names {
		if cmd := findCommand(n); cmd != nil {
			out = append(out, cmd.fullname, commandDoc(cmd))
		}
	}
	return out, nil
}

func cmdCommandList(c *client, args [][]byte) (any, error) {
	out := [][]byte{}
	for _, n := range sortedCommandNames() {
		out = append(out, []byte(n))
		for _, sub := range commandTable[n].subs {
			out = append(out, []byte(sub.fullname))
		}
	}
	return out, nil
}

func cmdCommandHelp(c *client, args [][]byte) (any, error) {
	return helpReply("COMMAND",
		"(no subcommand)", "    Return details about all Redis commands.",
		"COUNT", "    Return the total number of commands in this Redis server.",
		"LIST", "    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
		"DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
	), nil
}

func cmdMemoryUsage(c *client, args [][]byte) (any, error) {
	if len(args) != 3 && !(len(args) == 5 && eq(args[3], "samples")) {
		return nil, errSyntax
	}
	v := c.keyspace().Get(string(args[2]))
	if v == nil {
		return nil, nil
	}
	size := int64(len(args[2])) + 56
	switch v := v.(type) {
	case *store.String:
		size += int64(len(v.B)) + 16
	case *store.List:
		size += 32
		v.Each(0, false, func(_ int, e []byte) bool { size += int64(len(e)) + 32; return true })
	case *store.Stream:
		size += v.MemoryUsage()
	case *store.Set:
		size += 32
		for _, m := range v.Members() {
			size += int64(len(m)) + 16
		}
	case *store.Hash:
		size += 32
		v.Each(func(f, val []byte) { size += int64(len(f)+len(val)) + 24 })
	case *store.Zset:
		size += 32
		v.Range(0, v.Len()-1, false, func(m []byte, _ float64) bool { size += int64(len(m)) + 48; return true })
	}
	return size, nil
}

func cmdMemoryStats(c *client, args [][]byte) (any, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return resp.Map{"peak.allocated", int64(ms.HeapSys), "total.allocated", int64(ms.HeapAlloc), "keys.count", c.s.totalKeys()}, nil
}

func cmdMemoryHelp(c *client, args [][]byte) (any, error) {
	return helpReply("MEMORY", "STATS", "    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]", "    Return memory in bytes used by <key> and its value."), nil
}

func (s *Server) totalKeys() int {
	n := 0
	for _, db := range s.store.DBs {
		n += db.Len()
	}
	return n
}

// rssBytes reads the resident set size from /proc (0 where unavailable).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func human(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", float64(n)/1024)
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
}

// zeros writes INFO fields this server has no counterpart for, so tools find Redis's names.
func zeros(b *strings.Builder, names ...string) {
	for _, n := range names {
		b.WriteString(n + ":0\r\n")
	}
}

// infoSections are INFO's default sections, in Redis's order.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "commandstats", "errorstats", "cluster", "keyspace"}

// notDefault are the sections INFO shows only when asked by name, "all" or "everything".
var notDefault = map[string]bool{"commandstats": true}

func cmdInfo(c *client, args [][]byte) (any, error) {
	want := map[string]bool{}
	if len(args) == 1 {
		for _, s := range infoSections {
			want[s] = !notDefault[s]
		}
	}
	for _, a := range args[1:] {
		n := strings.ToLower(string(a))
		switch n {
		case "default", "all", "everything":
			for _, s := range infoSections {
				want[s] = want[s] || n != "default" || !notDefault[s]
			}
		default:
			want[n] = true
		}
	}
	var b strings.Builder
	for _, sec := range infoSections {
		if !want[sec] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		c.s.writeInfoSection(&b, sec)
	}
	return resp.Verbatim(b.String()), nil
}

func (s *Server) writeInfoSection(b *strings.Builder, sec string) {
	kv := func(k string, v any) { fmt.Fprintf(b, "%s:%v\r\n", k, v) }
	now := time.Now()
	switch sec {
	case "server":
		b.WriteString("# Server\r\n")
		port := 0
		if i := strings.LastIndexByte(s.addr, ':'); i >= 0 {
			port, _ = strconv.Atoi(s.addr[i+1:])
		}
		exe, _ := os.Executable()
		kv("redis_version", RedisVersion)
		kv("redis_git_sha1", "00000000")
		kv("redis_git_dirty", 0)
		kv("redis_build_id", "qbench")
		kv("redis_mode", "standalone")
		kv("os", runtime.GOOS+" "+runtime.GOARCH)
		kv("arch_bits", 64)
		kv("monotonic_clock", "POSIX clock_gettime")
		kv("multiplexing_api", "epoll")
		kv("atomicvar_api", "c11-builtin")
		kv("gcc_version", "0.0.0")
		kv("process_id", os.Getpid())
		kv("process_supervised", "no")
		kv("run_id", s.runID)
		kv("tcp_port", port)
		kv("server_time_usec", now.UnixMicro())
		up := int64(now.Sub(s.started).Seconds())
		kv("uptime_in_seconds", up)
		kv("uptime_in_days", up/86400)
		kv("hz", 10)
		kv("configured_hz", 10)
		kv("lru_clock", now.Unix()&(1<<24-1))
		kv("executable", exe)
		kv("config_file", "")
		kv("io_threads_active", 0)
		kv("qbench_version", Version())
		kv("go_version", runtime.Version())
	case "clients":
		b.WriteString("# Clients\r\n")
		kv("connected_clients", len(s.clients))
		kv("cluster_connections", 0)
		kv("maxclients", s.conf.maxClients)
		kv("client_recent_max_input_buffer", 0)
		kv("client_recent_max_output_buffer", 0)
		kv("blocked_clients", s.blocked.count())
		kv("tracking_clients", 0)
		kv("clients_in_timeout_table", s.blocked.count())
	case "memory":
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		// Stream nodes live outside the Go heap (store's arena); count them too.
		used := int64(ms.HeapAlloc) + store.ArenaBytes()
		rss := rssBytes()
		b.WriteString("# Memory\r\n")
		kv("used_memory", used)
		kv("used_memory_human", human(used))
		kv("used_memory_rss", rss)
		kv("used_memory_rss_human", human(rss))
		kv("used_memory_peak", int64(ms.HeapSys))
		kv("used_memory_peak_human", human(int64(ms.HeapSys)))
		kv("total_system_memory", 0)
		kv("maxmemory", 0)
		kv("maxmemory_human", "0B")
		kv("maxmemory_policy", "noeviction")
		kv("mem_fragmentation_ratio", fmt.Sprintf("%.2f", float64(rss)/float64(max(used, 1))))
		kv("mem_allocator", "go")
		kv("used_memory_startup", 0)
		kv("used_memory_dataset", used)
		kv("used_memory_overhead", 0)
		kv("total_system_memory_human", "0B")
		zeros(b, "active_defrag_running", "allocator_active", "allocator_allocated", "allocator_frag_bytes",
			"allocator_resident", "allocator_rss_bytes", "lazyfree_pending_objects", "lazyfreed_objects",
			"mem_aof_buffer", "mem_clients_normal", "mem_clients_slaves", "mem_cluster_links",
			"mem_fragmentation_bytes", "mem_not_counted_for_evict", "mem_replication_backlog",
			"mem_total_replication_buffers", "number_of_cached_scripts", "number_of_functions",
			"number_of_libraries", "rss_overhead_bytes", "used_memory_functions", "used_memory_lua",
			"used_memory_scripts", "used_memory_scripts_eval", "used_memory_vm_eval",
			"used_memory_vm_functions", "used_memory_vm_total")
		kv("go_heap_sys", int64(ms.HeapSys))
		kv("go_num_gc", ms.NumGC)
	case "persistence":
		b.WriteString("# Persistence\r\n")
		s.p.writeInfo(kv)
		zeros(b, "current_cow_size_age", "rdb_last_cow_size", "rdb_last_load_keys_expired", "rdb_last_load_keys_loaded")
	case "stats":
		b.WriteString("# Stats\r\n")
		kv("total_connections_received", s.stats.connectionsReceived)
		kv("total_commands_processed", s.stats.commandsProcessed)
		kv("instantaneous_ops_per_sec", 0)
		kv("total_net_input_bytes", s.stats.netInput.Load())
		kv("total_net_output_bytes", s.stats.netOutput.Load())
		kv("rejected_connections", s.stats.rejectedConns)
		kv("expired_keys", s.store.ExpiredKeys)
		kv("evicted_keys", 0)
		kv("keyspace_hits", s.stats.keyspaceHits)
		kv("keyspace_misses", s.stats.keyspaceMisses)
		kv("pubsub_channels", len(s.pubsub.channels))
		kv("pubsub_patterns", len(s.pubsub.patterns))
		kv("total_error_replies", s.stats.errs.total)
		kv("latest_fork_usec", s.p.pauseUsec)
		spins, hits := s.loop.spinCounts() // not in Redis: the event loop's polls before blocking
		kv("loop_spins", spins)
		kv("loop_spin_hits", hits)
		kv("loop_handoffs", s.loop.handoffCount()) // not in Redis: clients moved to a goroutine
		zeros(b, "active_defrag_hits", "active_defrag_key_hits", "active_defrag_key_misses",
			"active_defrag_misses", "current_active_defrag_time", "current_eviction_exceeded_time",
			"dump_payload_sanitizations", "evicted_clients", "expire_cycle_cpu_milliseconds",
			"expired_stale_perc", "expired_time_cap_reached_count", "instantaneous_input_kbps",
			"instantaneous_input_repl_kbps", "instantaneous_output_kbps", "instantaneous_output_repl_kbps",
			"io_threaded_reads_processed", "io_threaded_writes_processed",
			"migrate_cached_sockets", "pubsubshard_channels", "reply_buffer_expands", "reply_buffer_shrinks",
			"slave_expires_tracked_keys", "sync_full", "sync_partial_err", "sync_partial_ok",
			"total_active_defrag_time", "total_eviction_exceeded_time", "total_forks",
			"total_net_repl_input_bytes", "total_net_repl_output_bytes", "total_reads_processed",
			"total_writes_processed", "tracking_total_items", "tracking_total_keys",
			"tracking_total_prefixes", "unexpected_error_replies")
	case "commandstats":
		s.stats.errs.writeCommandstats(b)
	case "errorstats":
		s.stats.errs.writeErrorstats(b)
	case "replication":
		b.WriteString("# Replication\r\n")
		kv("role", "master")
		kv("connected_slaves", 0)
		kv("master_failover_state", "no-failover")
		kv("master_replid", s.runID)
		kv("master_replid2", strings.Repeat("0", 40))
		kv("master_repl_offset", 0)
		kv("second_repl_offset", -1)
		kv("repl_backlog_active", 0)
		kv("repl_backlog_size", 1048576)
		kv("repl_backlog_first_byte_offset", 0)
		kv("repl_backlog_histlen", 0)
	case "cpu":
		sys, user := cpuSeconds()
		b.WriteString("# CPU\r\n")
		kv("used_cpu_sys", fmt.Sprintf("%.6f", sys))
		kv("used_cpu_user", fmt.Sprintf("%.6f", user))
		zeros(b, "used_cpu_sys_children", "used_cpu_user_children", "used_cpu_sys_main_thread", "used_cpu_user_main_thread")
	case "cluster":
		b.WriteString("# Cluster\r\n")
		kv("cluster_enabled", 0)
	case "keyspace":
		b.WriteString("# Keyspace\r\n")
		for i, db := range s.store.DBs {
			if db.Len() == 0 {
				continue
			}
			fmt.Fprintf(b, "db%d:keys=%d,expires=%d,avg_ttl=0\r\n", i, db.Len(), db.ExpiresLen())
		}
	}
}
