package scenarios

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestMatrixExpandsInOrder(t *testing.T) {
	sc, err := Parse("m.yaml", []byte(`name: sweep
duration: 2s
matrix:
  design: [stream, list]
  rate: [1000, 2000, max]
  persistence.appendfsync: [everysec]
  redis.stream.ack: [after]
repeat: 3
`), testChecks)
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
	want := []string{
		"design=stream,rate=1000,persistence.appendfsync=everysec,redis.stream.ack=after",
		"design=stream,rate=2000,persistence.appendfsync=everysec,redis.stream.ack=after",
		"design=stream,rate=max,persistence.appendfsync=everysec,redis.stream.ack=after",
		"design=list,rate=1000,persistence.appendfsync=everysec,redis.stream.ack=after",
		"design=list,rate=2000,persistence.appendfsync=everysec,redis.stream.ack=after",
		"design=list,rate=max,persistence.appendfsync=everysec,redis.stream.ack=after",
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Fatalf("cells:\n%s", strings.Join(names, "\n"))
	}
	c := cells[4].Scenario
	if c.Design != "list" || c.Rate.PerSecond != 2000 || c.Persistence["appendfsync"] != "everysec" || c.Name != "sweep/"+want[4] ||
		len(c.Matrix.Axes) != 0 || c.Repeat != 3 || c.Duration.D().Seconds() != 2 || c.Batch != DefaultBatch {
		t.Fatalf("cell 4: %+v", c)
	}
	if !cells[2].Scenario.Rate.Max {
		t.Fatalf("rate max not decoded")
	}
	// The cells do not share the base's persistence map.
	cells[0].Scenario.Persistence["appendfsync"] = "always"
	if cells[1].Scenario.Persistence["appendfsync"] != "everysec" {
		t.Fatal("cells share a map")
	}
	// The scenario as run (in a result) carries the matrix only in the base.
	b, _ := json.Marshal(sc)
	if !strings.Contains(string(b), `"matrix":{"design":["stream","list"],"rate":["1000","2000","max"]`) {
		t.Fatalf("json %s", b)
	}
	b, _ = json.Marshal(c)
	if strings.Contains(string(b), "matrix") {
		t.Fatalf("cell json has a matrix: %s", b)
	}
}

func TestNoMatrixIsOneCell(t *testing.T) {
	sc, err := Parse("x.yaml", []byte("name: x\nrate: 10\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil || len(cells) != 1 || cells[0].Scenario != sc || cells[0].Name != "" {
		t.Fatalf("%v %+v", err, cells)
	}
}

// Every bad matrix names the file, the line of the value at fault and the field.
func TestMatrixErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"unknown field", "name: x\nrate: 10\nmatrix:\n  rat: [1, 2]\n", "bad.yaml:4: matrix.rat: unknown field rat"},
		{"unsweepable", "name: x\nrate: 10\nmatrix:\n  name: [a, b]\n", "bad.yaml:4: matrix.name: name cannot be swept"},
		{"group", "name: x\nrate: 10\nmatrix:\n  redis: [a]\n", "bad.yaml:4: matrix.redis: redis is a group of fields"},
		{"whole map", "name: x\nrate: 10\nmatrix:\n  persistence: [a]\n", "bad.yaml:4: matrix.persistence: sweep one setting"},
		{"whole names", "name: x\nrate: 10\nmatrix:\n  names: [a]\n", "bad.yaml:4: matrix.names: sweep one setting, e.g. names.<key>"},
		{"empty", "name: x\nrate: 10\nmatrix:\n  rate: []\n", "bad.yaml:4: matrix.rate: needs at least one value"},
		{"bad value type", "name: x\nrate: 10\nmatrix:\n  producers: [1,\n    many]\n", "bad.yaml:5: matrix.producers.1: cannot unmarshal"},
		{"invalid cell", "name: x\nmatrix:\n  rate: [10,\n    -5]\n", "bad.yaml:4: matrix.rate.1: must be a positive number of messages per second, or max (got -5) (in cell rate=-5)"},
		{"base still checked", "name: x\nproducers: -1\nmatrix:\n  rate: [10]\n", "bad.yaml:2: producers: must be at least 1"},
		{"not a mapping", "name: x\nrate: 10\nmatrix: [1, 2]\n", "bad.yaml:3: matrix: "},
		{"repeat", "name: x\nrate: 10\nrepeat: -1\n", "bad.yaml:3: repeat: must be between 1 and 100"},
		{"too many cells", "name: x\nmatrix:\n  rate: [1,2,3,4,5,6,7,8,9,10]\n  producers: [1,2,3,4,5,6,7,8,9,10]\n  consumers: [1,2,3,4,5,6,7,8,9,10,11]\n", "matrix: expands into more than 1000 cells"},
		{"many axes", "name: x\nrate: 1\nmatrix:\n" + manyAxes(70), "matrix: expands into more than 1000 cells"},
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

// Parse (matrix included) never panics, and whatever it accepts expands into valid cells.
func FuzzParseMatrix(f *testing.F) {
	for _, s := range []string{
		"name: x\nrate: 10\nmatrix:\n  rate: [1, 2]\n  persistence.appendfsync: [always]\nrepeat: 2\n",
		"name: x\nmatrix:\n  design: [stream, list]\n  rate: [max, 5]\n",
		"name: x\nrate: 10\nmatrix:\n  redis.stream.ack: [after, before]\n  duration: [1s]\n",
		"name: x\nrate: 10\nmatrix: {}\n",
		"name: x\nrate: 10\nmatrix:\n  faults.0.at: [1s]\n",
		"name: x\nrate: 10\nmatrix:\n  system:\n    a: {engine: kafka, kafka: {acks: all}}\n    b: {design: list, persistence: {appendfsync: always}}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		sc, err := Parse("f.yaml", []byte(src), testChecks)
		if err != nil {
			return
		}
		cells, err := sc.Cells()
		if err != nil {
			t.Fatalf("accepted %q but cannot expand it: %v", src, err)
		}
		for _, c := range cells {
			if len(c.Scenario.Matrix.Axes) != 0 {
				t.Fatalf("cell %s still has a matrix", c.Name)
			}
		}
	})
}

// manyAxes sweeps n persistence settings over two values each: 2^n cells.
func manyAxes(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  persistence.k%d: [a, b]\n", i)
	}
	return b.String()
}
