package scenarios

import (
	"encoding/json"
	"strings"
	"testing"
)

const variantsYAML = `name: systems
producers: 2
consumers: 2
rate: 1000
duration: 4s
matrix:
  system:
    redis-always: {engine: server, design: stream, policy: aof-always}
    redis-everysec:
      engine: server
      design: stream
      persistence: {appendonly: "yes", appendfsync: everysec}
    kafka-acks-all: {engine: kafka, design: topic, batch: 16, kafka: {acks: all}}
  rate: [500, 1000]
faults:
  - {at: 2s, kind: power-loss, duration: 200ms}
`

// A variant axis sets several fields per cell; cells are named by label, in the order written,
// and each cell is validated with its own engine.
func TestVariantAxisExpands(t *testing.T) {
	checks := testChecks
	checks.Engines = append(checks.Engines[:len(checks.Engines):len(checks.Engines)], &Engine{Name: "server", Designs: []string{"stream"},
		Sections: []string{"stream", "persistence", "policy"}, Faults: []string{"power-loss"}})
	checks.Engines = withoutEngine(checks.Engines, "server", 1)
	sc, err := Parse("v.yaml", []byte(variantsYAML), checks)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cells {
		names = append(names, c.Name)
	}
	want := "system=redis-always,rate=500 system=redis-always,rate=1000 system=redis-everysec,rate=500 system=redis-everysec,rate=1000 system=kafka-acks-all,rate=500 system=kafka-acks-all,rate=1000"
	if strings.Join(names, " ") != want {
		t.Fatalf("cells %v", names)
	}
	k := cells[4].Scenario
	if k.Engine != "kafka" || k.Design != "topic" || k.Batch != 16 || k.Options.(kafkaOptions).Acks != "all" || k.Rate.PerSecond != 500 {
		t.Fatalf("kafka cell: %+v", k)
	}
	r := cells[2].Scenario
	if r.Engine != "server" || r.Persistence["appendfsync"] != "everysec" || r.Batch != DefaultBatch || r.Options != nil {
		t.Fatalf("redis cell: %+v", r)
	}
	if cells[0].Scenario.Policy != "aof-always" || cells[0].Scenario.Persistence["appendfsync"] == "everysec" {
		t.Fatalf("cells share settings: %+v", cells[0].Scenario)
	}
	// The result's scenario keeps each variant's fields.
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"system":{"redis-always":{"design":"stream","engine":"server","policy":"aof-always"}`) {
		t.Fatalf("json %s", b)
	}
}

// withoutEngine drops the first n engines named name (a test's own copy replaces them).
func withoutEngine(es []*Engine, name string, n int) []*Engine {
	var out []*Engine
	for _, e := range es {
		if e.Name == name && n > 0 {
			n--
			continue
		}
		out = append(out, e)
	}
	return out
}

// Every bad variant names the file, the line of the value at fault and the field.
func TestVariantErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"axis named by a field", "name: x\nrate: 10\nmatrix:\n  engine:\n    a: {design: stream}\n", "bad.yaml:4: matrix.engine: a mapping of variants is named by a label"},
		{"not a mapping", "name: x\nrate: 10\nmatrix:\n  system:\n    a: kafka\n", "bad.yaml:5: matrix.system.a: must map fields to values"},
		{"bad label", "name: x\nrate: 10\nmatrix:\n  system:\n    \"a/b\": {rate: 5}\n", "bad.yaml:5: matrix.system.a/b: a variant's label must be"},
		{"unsweepable", "name: x\nrate: 10\nmatrix:\n  system:\n    a: {rate: 5}\n    b:\n      faults: []\n", "bad.yaml:7: matrix.system.b.faults: faults cannot be swept"},
		{"unknown field", "name: x\nrate: 10\nmatrix:\n  system:\n    a: {rat: 5}\n", "bad.yaml:5: matrix.system.a.rat: unknown field rat"},
		{"set twice", "name: x\nrate: 10\nmatrix:\n  system:\n    a: {persistence: {appendfsync: always}, persistence.appendfsync: no}\n", "matrix.system.a.persistence.appendfsync: is set twice"},
		{"duplicate label", "name: x\nrate: 10\nmatrix:\n  system:\n    a: {rate: 5}\n    a: {rate: 6}\n", "matrix.system.1: repeats the value a"},
		{"bad value in a cell", "name: x\nrate: 10\nmatrix:\n  system:\n    a: {rate: 5}\n    b:\n      rate: -5\n", "bad.yaml:7: matrix.system.b.rate: must be a positive number"},
		{"section error in a cell", "name: x\nrate: 10\nmatrix:\n  system:\n    k:\n      engine: kafka\n      kafka: {acks: some}\n", "bad.yaml:7: matrix.system.k.kafka.acks: want all or leader"},
		{"design of another engine", "name: x\nrate: 10\nmatrix:\n  system:\n    k: {engine: kafka, design: stream}\n", "bad.yaml:5: matrix.system.k.design: engine kafka has no design"},
		{"fault the engine cannot do", "name: x\nrate: 10\nduration: 5s\nmatrix:\n  system:\n    k: {engine: kafka}\n    e: {engine: embedded}\nfaults:\n  - {at: 1s, kind: power-loss, duration: 100ms}\n", "faults.0.kind: engine embedded cannot carry out fault kind power-loss"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(c.yaml), testChecks)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant %q", err, c.want)
			}
		})
	}
}
