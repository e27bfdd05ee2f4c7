package results

import (
	"strings"
	"testing"
)

// A death shows on the summary (the window's mark, the flag's text, the label's tag) and
// survives a merge of repetitions in which only the second run's server died.
func TestEngineDiedShown(t *testing.T) {
	mk := func(id string, died bool) *Result {
		r := &Result{SchemaVersion: SchemaVersion, RunID: id, Scenario: []byte(`{"name":"x"}`), Summary: quietSummary(), Histograms: map[string]string{},
			Engine: Engine{Name: "redis"},
			Faults: []FaultWindow{{Kind: "disk-full", Target: "server", StartNs: 2e9, EndNs: 3e9, RecoverWriteNs: -1, RecoverReadNs: -1}}}
		if died {
			r.Engine.Died = &EngineDeath{AtNs: 2_010_000_000, Status: "exit status 1", Log: []string{"# Exiting..."}}
			r.Faults[0].EngineDied = true
		}
		return r
	}
	m, err := Merge([]*Result{mk("a", false), mk("b", true)}, MergeOptions{Mode: MergeRepetitions})
	if err != nil {
		t.Fatal(err)
	}
	if m.Engine.Died == nil || !m.Faults[0].EngineDied {
		t.Fatalf("merged: died %+v, window %+v; want the second run's death kept", m.Engine.Died, m.Faults[0])
	}
	var text strings.Builder
	if err := WriteSummary(&text, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"disk-full (server died)", "engine died: the redis server exited on its own at 2.01s (exit status 1); its last log line: # Exiting..."} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, text.String())
		}
	}
	if l := Assess(m).Label(); !strings.Contains(l, "died") {
		t.Errorf("label %q lacks the died tag", l)
	}
}
