package bench_test

import (
	"testing"
)

// A run on a redis-server qbench starts itself reports the server's own CPU, memory and bytes
// written from /proc, for the report's decision table; a run on the in-process server does not
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
	// The same CPU as a share of the machine, beside qbench's, for the machine-CPU warning.
	g := res.Summary.Generator
	if g.EngineCPUShare <= 0 || g.EngineCPUShare > 1 {
		t.Errorf("engine CPU share %v, want it measured (0 to 1)", g.EngineCPUShare)
	}
	t.Logf("engine CPU %.1f us/msg, RSS %.1f MiB, written %.0f B/msg", float64(st["proc_cpu_ns"])/3000/1e3, float64(st["proc_rss_bytes"])/(1<<20), float64(st["proc_write_bytes"])/3000)

	emb := run(t, scenario(t, "engine: embedded\nrate: 1000\nduration: 500ms\n"))
	if _, ok := emb.Engine.Stats["proc_cpu_ns"]; ok {
		t.Errorf("the in-process server reports its own process cost: %v", emb.Engine.Stats)
	}
	if g := emb.Summary.Generator; g.EngineCPUShare != 0 {
		t.Errorf("the in-process server has an engine CPU share of its own: %v (qbench's share holds it)", g.EngineCPUShare)
	}
}
