package bench_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"qbench/results"
)

// A value JSON cannot hold that reaches a run past the loader (a scenario built or changed in
// code) does not lose the finished run: the scenario is recorded with it as 0, the result says so,
// and the result file is written. Before, Run failed at the end with "json: unsupported value".
func TestRunWithANonFiniteScenarioValueKeepsItsResult(t *testing.T) {
	sc := scenario(t, "engine: embedded\ndesign: list\nrate: 200\nduration: 500ms\n")
	sc.ShardSkew = math.NaN() // read only by zipf routing: the run itself is unchanged
	res := run(t, sc)
	if !strings.Contains(strings.Join(res.Summary.Warnings, "\n"), "scenario: shard_skew held a value JSON cannot hold") {
		t.Errorf("warnings %q do not name shard_skew", res.Summary.Warnings)
	}
	var buf bytes.Buffer
	if err := results.Write(&buf, res); err != nil {
		t.Fatal(err)
	}
	var back results.Result
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back.Summary.Ledger.Acked == 0 {
		t.Fatalf("result did not round-trip (%v): acked %d", err, back.Summary.Ledger.Acked)
	}
}
