package scenarios

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// moveKeys reads an older scenario's top-level keys that now sit in an engine's own section
// (Engine.Moved: stream:, list:, pubsub:, wait: are redis.stream: and so on) as if the file wrote
// them there, by moving their nodes into the section before decoding, so that every later error
// still names the line written. A matrix axis over such a key (stream.ack) becomes the section's
// (redis.stream.ack). Each move is a deprecation warning with its line. Refused, with the line:
// an old key for an engine whose section does not hold it (a scenario's engine, or any engine it
// sweeps), and an old key beside the section itself (which one would win is not the file's to
// leave unsaid).
func moveKeys(file string, root *yaml.Node, c Checks) (warnings, errs Errors) {
	if root.Kind != yaml.MappingNode || len(c.Engines) == 0 {
		return nil, nil
	}
	owner := map[string]string{} // old key -> the section holding it now
	for _, e := range c.Engines {
		for _, k := range e.Moved {
			if _, taken := owner[k]; !taken && e.Options != "" {
				owner[k] = e.Options
			}
		}
	}
	if len(owner) == 0 {
		return nil, nil
	}
	readers := func(sec string) bool {
		for _, name := range scenarioEngines(root) {
			e, err := c.engine(name)
			if err != nil || e.Options == sec {
				return true // an unknown engine is reported as such, with its line
			}
		}
		return false
	}
	refuse := func(k *yaml.Node, field, sec, old string) {
		engine := strings.Join(scenarioEngines(root), ", ")
		holders := c.names(func(e *Engine) bool { return e.Options == sec })
		errs = append(errs, &Error{File: file, Line: k.Line, Field: field, Msg: fmt.Sprintf(
			"engine %s does not read %s: it is now %s.%s, the section of engine %s", engine, old, sec, old, strings.Join(holders, ", "))})
	}
	moved := map[string]*yaml.Node{} // section -> the mapping the old keys go into
	var content []*yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		sec, old := owner[k.Value]
		if !old {
			content = append(content, k, v)
			continue
		}
		if n := findKey(root, sec); n != nil {
			errs = append(errs, &Error{File: file, Line: k.Line, Field: k.Value, See: sec, SeeLine: n.Line, Msg: fmt.Sprintf(
				"is an old form of %s.%s, and the file also has %s:; move %s: into %s:", sec, k.Value, sec, k.Value, sec)})
			content = append(content, k, v)
			continue
		}
		if !readers(sec) {
			refuse(k, k.Value, sec, k.Value)
			content = append(content, k, v)
			continue
		}
		m := moved[sec]
		if m == nil {
			m = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: k.Line, Column: k.Column}
			moved[sec] = m
			content = append(content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: sec, Line: k.Line, Column: k.Column}, m)
		}
		m.Content = append(m.Content, k, v)
		warnings = append(warnings, &Error{File: file, Line: k.Line, Field: k.Value, Msg: fmt.Sprintf(
			"deprecated: top-level %s: is now %s.%s; read as that (indent it under %s:)", k.Value, sec, k.Value, sec)})
	}
	root.Content = content
	if m := mappingValue(root, "matrix"); m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := m.Content[i]
			first, _, dotted := strings.Cut(k.Value, ".")
			sec, old := owner[first]
			if !old || !dotted {
				continue
			}
			if !readers(sec) {
				refuse(k, "matrix."+k.Value, sec, first)
				continue
			}
			was := k.Value
			k.Value = sec + "." + was
			warnings = append(warnings, &Error{File: file, Line: k.Line, Field: "matrix." + was, Msg: fmt.Sprintf(
				"deprecated: the axis %s is now %s; read as that", was, k.Value)})
		}
	}
	return warnings, errs
}

// scenarioEngines are the engines a scenario's nodes name: those its matrix sweeps, else its
// engine (the default when none is written).
func scenarioEngines(root *yaml.Node) []string {
	var out []string
	if m := mappingValue(root, "matrix"); m != nil && m.Kind == yaml.MappingNode {
		if v := mappingValue(m, "engine"); v != nil {
			vals := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				vals = v.Content
			}
			for _, n := range vals {
				if n.Kind == yaml.ScalarNode && !slices.Contains(out, n.Value) {
					out = append(out, n.Value)
				}
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	if v := mappingValue(root, "engine"); v != nil && v.Kind == yaml.ScalarNode {
		return []string{v.Value}
	}
	return []string{DefaultEngine}
}

// Normalize reads a scenario decoded from a result's JSON (UnmarshalJSON) as the loader reads a
// file today: sections an older qbench wrote at the top level (a result's "stream" object) moved
// into the engine's own section when it holds them now, and that section decoded by the engine
// with its defaults (Options), so that an old result and a new one of the same scenario marshal
// alike (compare's like-with-like check). An error leaves the scenario as it was decoded.
func (s *Scenario) Normalize(c Checks) error {
	e, err := c.engine(s.Engine)
	if err != nil || e.Options == "" || e.Decode == nil {
		return err
	}
	secs := make(map[string]*yaml.Node, len(s.Sections))
	for k, n := range s.Sections {
		secs[k] = n
	}
	own := secs[e.Options]
	if own == nil {
		own = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	own = copyNode(own)
	for _, k := range e.Moved {
		if n, old := secs[k]; old {
			if mappingValue(own, k) == nil {
				setMapping(own, k, n)
			}
			delete(secs, k)
		}
	}
	secs[e.Options] = own
	was := *s
	// A recorded section holds every subsection with its defaults, not what a file wrote: it
	// is read as a matrix over the design would be (settings for other designs in order).
	s.Sections, s.keys, s.designSwept = secs, map[string]int{}, true
	var errs Errors
	s.decodeOptions(e, &errs)
	s.designSwept = was.designSwept
	if len(errs) > 0 {
		*s = was
		return errs
	}
	return nil
}
