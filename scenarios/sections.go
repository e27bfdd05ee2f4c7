package scenarios

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// plain is Scenario without its JSON methods.
type plain Scenario

// MarshalJSON writes the scenario with the engines' sections after its fields: the engine's own
// section as decoded (defaults filled, even when not written), others as written.
func (s Scenario) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(plain(s))
	if err != nil || (len(s.Sections) == 0 && s.Options == nil) {
		return b, err
	}
	secs := map[string]any{}
	for k, n := range s.Sections {
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		secs[k] = v
	}
	if s.Options != nil && s.optionsKey != "" {
		// Through YAML, so the keys are the section's own and durations read "5ms".
		y, err := yaml.Marshal(s.Options)
		if err != nil {
			return nil, err
		}
		var v any
		if err := yaml.Unmarshal(y, &v); err != nil {
			return nil, err
		}
		secs[s.optionsKey] = v
	}
	extra, err := json.Marshal(secs) // sorted keys
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte("}"))
	if len(b) > 1 {
		b = append(b, ',')
	}
	return append(b, extra[1:]...), nil
}

// UnmarshalJSON reads a scenario written by MarshalJSON (a result's): an object under a key no
// field takes is an engine's section, kept as YAML for its engine to decode.
func (s *Scenario) UnmarshalJSON(b []byte) error {
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = Scenario(p)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	known := jsonFields(reflect.TypeOf(plain{}))
	for k, raw := range m {
		if known[k] || len(raw) == 0 || raw[0] != '{' {
			continue
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 {
			continue
		}
		if s.Sections == nil {
			s.Sections = map[string]*yaml.Node{}
		}
		s.Sections[k] = doc.Content[0]
	}
	return nil
}

func jsonFields(t reflect.Type) map[string]bool {
	m := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]; tag != "" && tag != "-" {
			m[tag] = true
		}
	}
	return m
}

// setSection sets a swept key of an engine's section (kafka.acks, kafka.broker.log.flush.ms) in
// a copy of the section, so that cells never share a node.
func (s *Scenario) setSection(parts []string, val *yaml.Node) {
	secs := make(map[string]*yaml.Node, len(s.Sections)+1)
	for k, n := range s.Sections {
		secs[k] = n
	}
	root := secs[parts[0]]
	if root == nil {
		root = &yaml.Node{Kind: yaml.MappingNode}
	}
	root = copyNode(root)
	secs[parts[0]] = root
	s.Sections = secs
	n, rest := root, parts[1:]
	for len(rest) > 1 {
		child := mappingValue(n, rest[0])
		if child == nil || child.Kind != yaml.MappingNode {
			// A map of settings (broker: {...}): the rest of the path is one key.
			child = &yaml.Node{Kind: yaml.MappingNode}
			setMapping(n, rest[0], child)
			setMapping(child, strings.Join(rest[1:], "."), val)
			return
		}
		n, rest = child, rest[1:]
	}
	setMapping(n, rest[0], val)
}

// copyNode copies a mapping deeply enough that setting a key in the copy leaves n unchanged.
func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		if ch.Kind == yaml.MappingNode {
			ch = copyNode(ch)
		}
		c.Content[i] = ch
	}
	return &c
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func setMapping(m *yaml.Node, key string, val *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = val
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: val.Line}, val)
}
