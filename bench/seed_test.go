package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"

	"qbench/bench"
	"qbench/scenarios"
)

// A run on the in-repo server seeded from a dump.rdb that redis-server saved with a backlog of
// 40 unstamped entries in the named stream, half of them without qbench's payload field (and a
// key in db 3): the run starts from that data, its group reads the backlog first, counts it as
// foreign and acknowledges it (nothing left pending), and its own messages all arrive.
func TestSeededRunConsumesTheBacklog(t *testing.T) {
	needTarget(t, "redis")
	ctx := context.Background()
	srv, client := startRedisWithClient(t)
	for i := 0; i < 40; i++ {
		field := "d"
		if i%2 == 1 {
			field = "order" // an entry qbench did not write: no payload field at all
		}
		if err := client.XAdd(ctx, &redis.XAddArgs{Stream: "orders", Values: []any{field, fmt.Sprintf("backlog %d", i)}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	pipe := client.Pipeline()
	pipe.Select(ctx, 3)
	pipe.Set(ctx, "config", "v", 0)
	pipe.Save(ctx)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(srv.Dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "seed.rdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The seed is named relative to the scenario file.
	path := filepath.Join(dir, "seeded.yaml")
	if err := os.WriteFile(path, []byte(`
engine: server
design: stream
names: {stream: orders, group: billing}
persistence: {seed-rdb: seed.rdb}
rate: 500
duration: 1s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Load(path, bench.Checks())
	if err != nil {
		t.Fatal(err)
	}
	l := run(t, sc).Summary.Ledger
	if l.Foreign != 40 || l.Acked == 0 || l.Delivered != l.Acked || l.Lost != 0 || l.Duplicates != 0 {
		t.Fatalf("ledger %+v: want the 40 seeded entries as foreign and every own message once", l)
	}
}
