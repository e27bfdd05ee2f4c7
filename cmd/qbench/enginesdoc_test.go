package main

import (
	"os"
	"strings"
	"testing"

	"qbench/engines"
)

// README's engine table is written by hand (it says what each engine needs installed, which the
// registry does not hold), so it is checked against the registry instead: every engine linked
// into qbench has a row.
func TestReadmeEngineTableNamesEveryEngine(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Engines\n")
	if start < 0 {
		t.Fatal("README.md has no ## Engines section")
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, strings.SplitN(line[1:], "|", 2)[0])
		}
	}
	if len(rows) == 0 {
		t.Fatal("no engine rows in README's ## Engines table")
	}
	for _, r := range engines.All() {
		found := false
		for _, first := range rows {
			if strings.Contains(first, "`"+r.Name+"`") {
				found = true
			}
		}
		if !found {
			t.Errorf("README.md's engine table has no row naming `%s`", r.Name)
		}
	}
}
