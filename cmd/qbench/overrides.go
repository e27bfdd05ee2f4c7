package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	yaml "go.yaml.in/yaml/v3"

	"qbench/scenarios"
)

// overrides are run's --duration, --rate and --set: changes to the scenario file applied to its
// YAML before it is decoded and validated, so an override is checked exactly as the file's own
// value would be, and the result records the scenario they produced (and the overrides).
type overrides struct {
	duration, rate string
	set            []string
}

func (o *overrides) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.duration, "duration", "", "override the scenario's duration (e.g. 3s); the same as --set duration=3s")
	cmd.Flags().StringVar(&o.rate, "rate", "", "override the scenario's rate in msg/s, or max; the same as --set rate=R")
	cmd.Flags().StringArrayVar(&o.set, "set", nil, "override one scenario field, by its path: --set redis.stream.count=10, --set kafka.acks=all, --set faults.0.at=3s (repeatable; the value is YAML)")
}

// list is every override as path=value, in the order they are applied.
func (o *overrides) list() []string {
	if o == nil {
		return nil
	}
	var l []string
	if o.duration != "" {
		l = append(l, "duration="+o.duration)
	}
	if o.rate != "" {
		l = append(l, "rate="+o.rate)
	}
	return append(l, o.set...)
}

// override is one parsed path=value.
type override struct {
	flag  string // as given: path=value
	path  []string
	value *yaml.Node
}

func parseOverride(s string) (override, error) {
	path, value, ok := strings.Cut(s, "=")
	if !ok || path == "" {
		return override{}, fmt.Errorf("--set %q: want path=value, e.g. redis.stream.count=10", s)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		return override{}, fmt.Errorf("--set %s: the value is not YAML: %v", s, err)
	}
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}
	if len(doc.Content) > 0 {
		v = doc.Content[0]
	}
	parts := strings.Split(path, ".")
	for _, p := range parts {
		if p == "" {
			return override{}, fmt.Errorf("--set %s: empty element in the path %q", s, path)
		}
	}
	return override{flag: s, path: parts, value: v}, nil
}

// apply sets the override's value in the document's mapping, creating mappings on the way.
func (ov override) apply(root *yaml.Node) error {
	n := root
	for i, key := range ov.path {
		last := i == len(ov.path)-1
		at := strings.Join(ov.path[:i], ".")
		switch n.Kind {
		case yaml.MappingNode:
			var val *yaml.Node
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == key {
					val = n.Content[j+1]
					if last {
						n.Content[j+1] = ov.value
					}
					break
				}
			}
			if last {
				if val == nil {
					n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, ov.value)
				}
				return nil
			}
			if val == nil {
				val = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, val)
			}
			n = val
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(key)
			if err != nil || idx < 0 || idx >= len(n.Content) {
				return fmt.Errorf("--set %s: %s is a list of %d: %q is not one of its indices", ov.flag, at, len(n.Content), key)
			}
			if last {
				n.Content[idx] = ov.value
				return nil
			}
			n = n.Content[idx]
		default:
			return fmt.Errorf("--set %s: %s is a single value, not a mapping: it has no %q", ov.flag, at, key)
		}
	}
	return nil
}

// loadScenarioWith loads path with the overrides applied; with none it is loadScenario.
// Errors name the file and field; an error about an overridden field names the override.
func loadScenarioWith(path string, ovs []string) (*scenarios.Scenario, error) {
	if len(ovs) == 0 {
		return loadScenario(path)
	}
	c, err := scenarioChecks()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError{err}
	}
	// The file alone first: its own syntax errors keep their lines.
	var orig, doc yaml.Node
	if err := yaml.Unmarshal(data, &orig); err != nil {
		_, perr := scenarios.Parse(path, data, c)
		return nil, usageError{perr}
	}
	_ = yaml.Unmarshal(data, &doc)
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		_, perr := scenarios.Parse(path, data, c)
		return nil, usageError{perr}
	}
	parsed := make([]override, 0, len(ovs))
	for _, s := range ovs {
		ov, err := parseOverride(s)
		if err != nil {
			return nil, usageError{err}
		}
		ov = movedOverride(ov, root, c)
		if err := ov.apply(root); err != nil {
			return nil, usageError{err}
		}
		parsed = append(parsed, ov)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	_ = enc.Close()
	sc, err := scenarios.Parse(path, buf.Bytes(), c)
	if err != nil {
		return nil, usageError{relocate(err, &orig, parsed)}
	}
	if len(sc.Deprecated) > 0 {
		warn(relocate(sc.Deprecated, &orig, parsed))
	}
	return sc, nil
}

// movedOverride reads an override of a key that moved into the scenario engine's section (--set
// stream.count=10 is redis.stream.count) as the section's, with a deprecation warning, unless
// the file itself still has the old key (which Parse then moves, warning about it).
func movedOverride(ov override, root *yaml.Node, c scenarios.Checks) override {
	engine := scenarios.DefaultEngine
	for j := 0; j+1 < len(root.Content); j += 2 {
		switch k, v := root.Content[j].Value, root.Content[j+1]; {
		case k == ov.path[0]:
			return ov
		case k == "engine" && v.Kind == yaml.ScalarNode:
			engine = v.Value
		}
	}
	// Only for an engine whose section holds the key: for another, the loader's error names it.
	for _, e := range c.Engines {
		if e.Name != engine || e.Options == "" || !slices.Contains(e.Moved, ov.path[0]) {
			continue
		}
		was := strings.Join(ov.path, ".")
		ov.path = append([]string{e.Options}, ov.path...)
		fmt.Fprintf(os.Stderr, "warning: --set %s: deprecated: %s is now %s; read as that\n", ov.flag, was, strings.Join(ov.path, "."))
		return ov
	}
	return ov
}

// relocate points errors found in the re-encoded document back at the file: an error about an
// overridden field names the override; any other gets its field's line in the original file.
func relocate(err error, orig *yaml.Node, ovs []override) error {
	var es scenarios.Errors
	var e *scenarios.Error
	switch {
	case errors.As(err, &es):
	case errors.As(err, &e):
		es = scenarios.Errors{e}
	default:
		return err
	}
	for _, e := range es {
		e.Line, e.SeeLine = 0, 0
		if ov, ok := overrideOf(e.Field, ovs); ok {
			e.Field += " (--set " + ov.flag + ")"
			continue
		}
		e.Line = lineOf(orig, e.Field)
		if _, rest, ok := strings.Cut(e.Field, "."); ok && e.Line == 0 {
			e.Line = lineOf(orig, rest) // a key the file has in its old place (stream.ack for redis.stream.ack)
		}
		if e.See != "" {
			e.SeeLine = lineOf(orig, e.See)
		}
	}
	return es
}

// overrideOf finds the last override whose path is field, under it or above it.
func overrideOf(field string, ovs []override) (override, bool) {
	for i := len(ovs) - 1; i >= 0; i-- {
		p := strings.Join(ovs[i].path, ".")
		if field == p || strings.HasPrefix(field, p+".") || strings.HasPrefix(p, field+".") {
			return ovs[i], true
		}
	}
	return override{}, false
}

// lineOf is the line of the deepest node of doc on field's path (0 when not even its first key
// is in the file).
func lineOf(doc *yaml.Node, field string) int {
	if len(doc.Content) == 0 {
		return 0
	}
	n, line := doc.Content[0], 0
	for _, key := range strings.Split(field, ".") {
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == key {
					line, next = n.Content[j].Line, n.Content[j+1]
					break
				}
			}
			if next == nil {
				return line
			}
			n = next
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(key)
			if err != nil || idx < 0 || idx >= len(n.Content) {
				return line
			}
			n = n.Content[idx]
			line = n.Line
		default:
			return line
		}
	}
	return line
}
