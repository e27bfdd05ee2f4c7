package server

// The persistence commands: SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE, CONFIG GET/SET of the
// persistence parameters, INFO persistence.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"qbench/engines/server/aof"
	"qbench/engines/server/resp"
)

// configGet and configSet are CONFIG GET/SET of the persistence parameters (persistConfigNames).
func (p *persistence) configGet(name string) (string, bool) {
	switch name {
	case "appendonly":
		return yesNo(p.w != nil), true
	case "appendfsync":
		return p.policy.String(), true
	case "save":
		return p.saveStr, true
	case "dir":
		abs, err := filepath.Abs(p.dir)
		if err != nil {
			return p.dir, true
		}
		return abs, true
	case "auto-aof-rewrite-percentage":
		return strconv.FormatInt(p.autoRewritePct, 10), true
	case "auto-aof-rewrite-min-size":
		return strconv.FormatInt(p.autoRewriteMin, 10), true
	case "aof-load-truncated":
		return "yes", true
	case "stop-writes-on-bgsave-error":
		return yesNo(p.stopWrites), true
	}
	return "", false
}

var persistConfigNames = []string{"appendonly", "appendfsync", "save", "dir", "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size", "aof-load-truncated", "stop-writes-on-bgsave-error"}

func (p *persistence) configSet(name, val string) (bool, error) {
	bad := func(reason string) error {
		return errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, reason)
	}
	switch name {
	case "appendonly":
		switch strings.ToLower(val) {
		case "yes":
			if p.w == nil {
				if err := p.startAOFLocked(); err != nil {
					return true, bad(err.Error())
				}
			}
		case "no":
			if p.w != nil {
				p.w.Close()
				p.w = nil
			}
		default:
			return true, bad("argument must be 'yes' or 'no'")
		}
	case "appendfsync":
		pol, ok := aof.ParsePolicy(strings.ToLower(val))
		if !ok {
			return true, bad("argument(s) must be one of the following: always, everysec, no")
		}
		p.policy = pol
		if p.w != nil {
			p.w.SetPolicy(pol)
		}
	case "save":
		r, err := parseSaveRules(val)
		if err != nil {
			return true, bad("Invalid save parameters")
		}
		p.rules, p.saveStr = r, val
	case "dir":
		if err := p.fs.MkdirAll(val); err != nil {
			return true, bad(err.Error())
		}
		p.dir = val
	case "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size":
		n, ok := memToBytes(val)
		if !ok {
			return true, bad("argument couldn't be parsed into an integer")
		}
		if name == "auto-aof-rewrite-percentage" {
			p.autoRewritePct = n
		} else {
			p.autoRewriteMin = n
		}
	case "aof-load-truncated":
		if strings.ToLower(val) != "yes" {
			return true, bad("only 'yes' is supported")
		}
	case "stop-writes-on-bgsave-error":
		switch strings.ToLower(val) {
		case "yes", "no":
			p.stopWrites = strings.ToLower(val) == "yes"
		default:
			return true, bad("argument must be 'yes' or 'no'")
		}
	default:
		return false, nil
	}
	return true, nil
}

// persistCommands are SAVE, BGSAVE, BGREWRITEAOF; LASTSAVE is registered in cmd_server.go with
// cmdLastsaveP below.
var persistCommands = []*command{
	{name: "save", arity: 1, flags: flagAdmin | flagNoScript, group: "server", summary: "Synchronously save the dataset to disk", h: cmdSave},
	{name: "bgsave", arity: -1, flags: flagAdmin | flagNoScript, group: "server", summary: "Asynchronously save the dataset to disk", h: cmdBgsave},
	{name: "bgrewriteaof", arity: 1, flags: flagAdmin | flagNoScript, group: "server", summary: "Asynchronously rewrite the append-only file", h: cmdBgrewriteaof},
}

func cmdSave(c *client, args [][]byte) (any, error) {
	p := c.s.p
	if p.bgsave {
		return nil, redisError("ERR Background save already in progress")
	}
	if err := p.save(false); err != nil {
		return nil, redisError("ERR " + err.Error())
	}
	return resp.OK, nil
}

func cmdBgsave(c *client, args [][]byte) (any, error) {
	p := c.s.p
	if len(args) > 2 || (len(args) == 2 && !eq(args[1], "schedule")) {
		return nil, errSyntax
	}
	switch {
	case p.bgsave:
		return nil, redisError("ERR Background save already in progress")
	case p.rewrite || c.inExec:
		if len(args) == 2 || c.inExec {
			p.bgsaveScheduled = true
			return resp.Simple("Background saving scheduled"), nil
		}
		return nil, redisError("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
	}
	if err := p.save(true); err != nil {
		return nil, redisError("ERR") // Redis's shared.err: a failed fork says no more
	}
	return resp.Simple("Background saving started"), nil
}

func cmdBgrewriteaof(c *client, args [][]byte) (any, error) {
	p := c.s.p
	switch {
	case p.rewrite:
		return nil, redisError("ERR Background append only file rewriting already in progress")
	case p.bgsave || c.inExec:
		p.rewriteScheduled = true
		p.rewriteFailures = 0
		return resp.Simple("Background append only file rewriting scheduled"), nil
	}
	if err := p.startRewrite(); err != nil {
		return nil, redisError("ERR Can't execute an AOF background rewriting. Please check the server logs for more information.")
	}
	return resp.Simple("Background append only file rewriting started"), nil
}

func cmdLastsaveP(c *client, args [][]byte) (any, error) { return c.s.p.lastSave.Unix(), nil }

// writeInfo is INFO persistence. Store lock held.
func (p *persistence) writeInfo(kv func(string, any)) {
	s := p.s
	kv("loading", 0)
	kv("async_loading", 0)
	kv("current_cow_peak", 0)
	kv("current_cow_size", 0)
	kv("current_fork_perc", "0.00")
	kv("current_save_keys_processed", 0)
	kv("current_save_keys_total", 0)
	kv("rdb_changes_since_last_save", s.dirty-p.dirtyAtSave)
	kv("rdb_bgsave_in_progress", boolInt(p.bgsave))
	kv("rdb_last_save_time", p.lastSave.Unix())
	kv("rdb_last_bgsave_status", okErr(p.lastBgsaveOK))
	kv("rdb_last_bgsave_time_sec", p.lastBgsaveSec)
	cur := int64(-1)
	if p.bgsave {
		cur = wholeSecondsSince(p.bgsaveStart)
	}
	kv("rdb_current_bgsave_time_sec", cur)
	kv("rdb_saves", p.saves)
	kv("aof_enabled", boolInt(p.w != nil))
	kv("aof_rewrite_in_progress", boolInt(p.rewrite))
	kv("aof_rewrite_scheduled", boolInt(p.rewriteScheduled))
	kv("aof_last_rewrite_time_sec", p.lastRewriteSec)
	cur = -1
	if p.rewrite {
		cur = wholeSecondsSince(p.rewriteStart)
	}
	kv("aof_current_rewrite_time_sec", cur)
	kv("aof_last_bgrewrite_status", okErr(p.lastRewriteOK))
	kv("aof_rewrites", p.rewrites)
	kv("aof_rewrites_consecutive_failures", p.rewriteFailures)
	var st aof.Stats
	if p.w != nil {
		st = p.w.Stats()
	}
	kv("aof_last_write_status", okErr(st.LastWriteErr == nil))
	kv("aof_fsyncs", st.Fsyncs) // qbench's own: the log's fsyncs, 0 with no log
	kv("aof_last_cow_size", 0)
	kv("module_fork_in_progress", 0)
	kv("module_fork_last_cow_size", 0)
	if p.w != nil {
		kv("aof_current_size", p.baseSize+st.CurrentSize)
		kv("aof_base_size", p.baseSize)
		kv("aof_pending_rewrite", 0)
		kv("aof_buffer_length", st.PendingBytes)
		kv("aof_pending_bio_fsync", boolInt(st.BgSyncRunning))
		kv("aof_delayed_fsync", st.DelayedFsync)
		// qbench's own fields: the fsync policy's effect.
		kv("aof_appendfsync", p.policy.String())
		kv("aof_written_records", st.WrittenRecords)
		kv("aof_synced_records", st.SyncedRecords)
		wpf := 0.0
		if st.Fsyncs > 0 {
			wpf = float64(st.SyncedRecords) / float64(st.Fsyncs)
		}
		kv("aof_writes_per_fsync", fmt.Sprintf("%.2f", wpf))
	}
	kv("loaded_records", p.loadedRecords)
	kv("load_time_ms", p.loadTime.Milliseconds())
	kv("latest_snapshot_pause_usec", p.pauseUsec)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}
