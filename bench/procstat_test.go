package bench_test

import (
	"fmt"
	"testing"
)

// A run on a redis-server qbench starts itself reports the server's own CPU, memory and device
// writes from /proc, for the report's decision table; a run on the in-process server does not
// (its cost is the generator's); summary.generator.engine_cpu_share likewise.
func TestEngineProcessCostIsReported(t *testing.T) {
	needTarget(t, "redis")
	res := run(t, scenario(t, "engine: redis\npolicy: aof-always\nrate: 2000\nduration: 1500ms\nmessage_size: 512\n"))
	st := res.Engine.Stats
	if st["proc_cpu_ns"] <= 0 || st["proc_rss_bytes"] < 1<<20 {
		t.Fatalf("engine CPU %d ns, RSS %d bytes: want both measured (stats %v)", st["proc_cpu_ns"], st["proc_rss_bytes"], st)
	}
	// 3,000 messages of 512 bytes appended and fsynced: at least that much written.
	if st["proc_write_bytes"] < 3000*512 {
		t.Errorf("engine wrote %d bytes, want at least %d", st["proc_write_bytes"], 3000*512)
	}
	// What redis-server appended to its log (aof_current_size's growth): a record per message.
	if per := float64(st["engine_log_bytes"]) / float64(res.Summary.Ledger.Acked); per < 512 || per > 2*(512+100) {
		t.Errorf("log bytes %.0f per 512-byte message, want the record's size (stats %v)", per, st)
	}
	// The same CPU as a share of the machine, beside qbench's, for the machine-CPU warning.
	g := res.Summary.Generator
	if g.EngineCPUShare <= 0 || g.EngineCPUShare > 1 {
		t.Errorf("engine CPU share %v, want it measured (0 to 1)", g.EngineCPUShare)
	}
	t.Logf("engine CPU %.1f us/msg, RSS %.1f MiB, device writes %.0f B/msg", float64(st["proc_cpu_ns"])/3000/1e3, float64(st["proc_rss_bytes"])/(1<<20), float64(st["proc_write_bytes"])/3000)

	emb := run(t, scenario(t, "engine: embedded\nrate: 1000\nduration: 500ms\n"))
	if _, ok := emb.Engine.Stats["proc_cpu_ns"]; ok {
		t.Errorf("the in-process server reports its own process cost: %v", emb.Engine.Stats)
	}
	if g := emb.Summary.Generator; g.EngineCPUShare != 0 {
		t.Errorf("the in-process server has an engine CPU share of its own: %v (qbench's share holds it)", g.EngineCPUShare)
	}
}

// Under appendfsync always on the in-repo server as a child process, the engine's log bytes per
// message are what it appended to its log: a 256-byte message's XADD record (the payload, its
// field name, the entry ID and RESP framing), so within 2x of the record's own size; never the
// zeros the log is preallocated with, which the device writes (/proc write_bytes) count and which
// stay a figure of their own.
func TestLogBytesPerMessageAreTheLogsGrowth(t *testing.T) {
	needTarget(t, "server")
	const size = 256
	res := run(t, scenario(t, fmt.Sprintf("engine: server\ndesign: stream\npolicy: aof-always\nrate: 2000\nduration: 1500ms\nwarmup: 0s\nmessage_size: %d\n", size)))
	st, acked := res.Engine.Stats, res.Summary.Ledger.Acked
	logB, ok := st["engine_log_bytes"]
	if !ok || acked == 0 {
		t.Fatalf("no log bytes (stats %v, acked %d)", st, acked)
	}
	perMsg := float64(logB) / float64(acked)
	// A record is the payload plus under 100 bytes of command, key, ID and framing.
	if perMsg < size || perMsg > 2*(size+100) {
		t.Errorf("log bytes %.0f per %d-byte message, want the record's size (%d to %d)", perMsg, size, size, 2*(size+100))
	}
	if _, ok := st["proc_write_bytes"]; !ok {
		t.Errorf("no device writes beside the log bytes: %v", st)
	}
	t.Logf("log %.0f B/msg, device %.0f B/msg", perMsg, float64(st["proc_write_bytes"])/float64(acked))
}

// A server crash and restart: the engine's CPU, device writes, log bytes and fsyncs are summed
// over both processes (the restart said in proc_restarts), not dropped.
func TestEngineCostSummedAcrossARestart(t *testing.T) {
	needTarget(t, "server")
	res := run(t, scenario(t, `
engine: server
design: stream
policy: aof-always
rate: 1000
duration: 2s
warmup: 0s
drain_timeout: 3s
faults:
  - {at: 800ms, kind: server-crash, duration: 200ms}
`))
	st := res.Engine.Stats
	if st["proc_restarts"] != 1 {
		t.Fatalf("proc_restarts %d, want 1 (stats %v)", st["proc_restarts"], st)
	}
	if _, bad := st["proc_cost_unknown"]; bad {
		t.Fatalf("cost unknown after a crash qbench injected: %v", st)
	}
	acked := res.Summary.Ledger.Acked
	for _, k := range []string{"proc_cpu_ns", "proc_write_bytes", "engine_log_bytes", "engine_fsyncs"} {
		if st[k] <= 0 {
			t.Errorf("%s = %d after the restart, want it summed over both processes (stats %v)", k, st[k], st)
		}
	}
	// Both processes appended: the log's growth is every acknowledged message's record, not only
	// the second process's share (about 1,000 of 2,000).
	if per := float64(st["engine_log_bytes"]) / float64(acked); per < 256*0.9 {
		t.Errorf("log bytes %.0f per message after a restart: the first process's share is missing", per)
	}
}
