package main

import (
	"slices"
	"strings"
	"testing"

	"qbench/engines"
)

// canCarryOut lists, as the validation error does, the registered engines that carry out kind:
// the test states the rule, the registry the names, so a new engine needs no edit here.
func canCarryOut(kind string) string {
	var names []string
	for _, r := range engines.All() {
		if slices.Contains(r.Faults, kind) {
			names = append(names, r.Name)
		}
	}
	return "(engines that can: " + strings.Join(names, ", ") + ")"
}

// A fault the engine cannot carry out is refused at validation (exit 2), naming the engines that
// can; in a matrix over engines only the cells that cannot are refused.
func TestValidateRefusesFaultsTheEngineCannotCarryOut(t *testing.T) {
	cases := []validateCase{
		{"server-crash on embedded", "engine: embedded\nrate: 100\nduration: 2s\nfaults:\n  - {at: 1s, kind: server-crash, duration: 200ms}\n",
			2, "faults.0.kind: engine embedded cannot carry out fault kind server-crash " + canCarryOut("server-crash")},
		{"disk-full on kafka", "engine: kafka\nrate: 100\nduration: 2s\nfaults:\n  - {at: 1s, kind: disk-full, duration: 200ms}\n",
			2, "engine kafka cannot carry out fault kind disk-full " + canCarryOut("disk-full")},
		{"stall on kafka-url", "engine: kafka-url\naddress: 127.0.0.1:9\nrate: 100\nduration: 2s\nfaults:\n  - {at: 1s, kind: stall, duration: 200ms}\n",
			2, "engine kafka-url cannot carry out fault kind stall " + canCarryOut("stall")},
		{"stall on embedded", "engine: embedded\nrate: 100\nduration: 2s\nfaults:\n  - {at: 1s, kind: stall, duration: 200ms}\n", 0, ""},
		{"consumer faults on any engine", "engine: nullq\nrate: 100\nduration: 2s\nfaults:\n  - {at: 1s, kind: consumer-pause, duration: 200ms}\n", 0, ""},
		{"matrix cell that cannot", "rate: 100\nduration: 2s\nmatrix:\n  engine: [server, embedded]\nfaults:\n  - {at: 1s, kind: server-crash, duration: 200ms}\n",
			2, "cannot carry out fault kind server-crash " + canCarryOut("server-crash") + " (in cell engine=embedded)"},
		{"matrix whose cells can", "rate: 100\nduration: 2s\nmatrix:\n  engine: [server, redis]\nfaults:\n  - {at: 1s, kind: server-crash, duration: 200ms}\n", 0, ""},
	}
	validateEach(t, cases)
}
