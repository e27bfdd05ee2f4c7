package scenarios

import (
	"strings"
	"testing"
)

// shards, shard_routing and shard_skew are checked with file, line and field, and Kafka is sent
// to its own equivalent.
func TestShardErrors(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"negative", "name: x\nrate: 10\nshards: -1\n", "bad.yaml:3: shards: must be between 1 and 1024 keys (got -1)"},
		{"too many", "name: x\nrate: 10\nshards: 5000\n", "bad.yaml:3: shards: must be between 1 and 1024 keys (got 5000)"},
		{"kafka", "name: x\nrate: 10\nengine: kafka\nshards: 4\n", "bad.yaml:4: shards: engine kafka does not read shards; its settings go under kafka:"},
		{"kafka-url", "name: x\nrate: 10\nengine: kafka-url\naddress: 127.0.0.1:9092\nshards: 2\n", "bad.yaml:5: shards: engine kafka-url does not read shards"},
		{"unknown routing", "name: x\nrate: 10\nshards: 4\nshard_routing: hash\n", "bad.yaml:4: shard_routing: must be round-robin, producer or zipf (got \"hash\")"},
		{"skew without zipf", "name: x\nrate: 10\nshards: 4\nshard_skew: 1.5\n", "bad.yaml:4: shard_skew: is the exponent of shard_routing: zipf"},
		{"skew at 1", "name: x\nrate: 10\nshards: 4\nshard_routing: zipf\nshard_skew: 1\n", "bad.yaml:5: shard_skew: must be a Zipf exponent above 1"},
		{"skew negative", "name: x\nrate: 10\nshards: 4\nshard_routing: zipf\nshard_skew: -2\n", "bad.yaml:5: shard_skew: must be a Zipf exponent above 1"},
		{"matrix cell", "name: x\nrate: 10\nmatrix:\n  shards: [2, 2000]\n", "bad.yaml:4: matrix.shards.1: must be between 1 and 1024 keys (got 2000)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(c.yaml), testChecks)
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

// Defaults: round-robin once there are several shards, skew 1.1 under zipf; a matrix sweeps
// shards.
func TestShardDefaultsAndSweep(t *testing.T) {
	sc, err := Parse("ok.yaml", []byte("name: x\nrate: 10\nshards: 4\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	if sc.ShardRouting != "round-robin" || sc.ShardSkew != 0 {
		t.Fatalf("routing %q skew %g", sc.ShardRouting, sc.ShardSkew)
	}
	sc, err = Parse("ok.yaml", []byte("name: x\nrate: 10\nshards: 4\nshard_routing: zipf\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	if sc.ShardSkew != DefaultShardSkew {
		t.Fatalf("skew %g", sc.ShardSkew)
	}
	sc, err = Parse("ok.yaml", []byte("name: x\nrate: 10\nmatrix:\n  shards: [1, 8]\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[1].Scenario.Shards != 8 || cells[1].Scenario.ShardRouting != "round-robin" {
		t.Fatalf("cells %+v", cells)
	}
}
