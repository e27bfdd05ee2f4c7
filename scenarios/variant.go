package scenarios

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// A variant axis sweeps several fields together, each value a labelled mapping of fields: the
// way to put different systems side by side in one matrix, where a field axis over engine: would
// pair every engine with every design and section.
//
//	matrix:
//	  system:
//	    redis-always: {engine: server, design: stream, policy: aof-always}
//	    kafka-acks-all: {engine: kafka, design: topic, kafka: {acks: all}}
//
// The axis's name is a free label (not a field); cells are named system=redis-always. A
// variant's keys are what a field axis may sweep (a field, a dotted field, an engine's section
// written whole or by key); a mapping under a group of fields (persistence:, an engine's
// section) sets each key it holds, over what the scenario wrote outside the matrix.

// readVariants reads a variant axis: labels to mappings of fields, in the order written.
func (a *Axis) readVariants(n *yaml.Node) error {
	a.Labels = []string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return &Error{Line: k.Line, Field: "matrix." + a.Key, Msg: "a variant's label must be a plain name"}
		}
		if v.Kind != yaml.MappingNode {
			return &Error{Line: v.Line, Field: "matrix." + a.Key + "." + k.Value, Msg: "must map fields to values (e.g. {engine: kafka, design: topic})"}
		}
		a.Labels = append(a.Labels, k.Value)
		a.Values = append(a.Values, v)
	}
	return nil
}

// label is how value i names its cell: a variant's label, or a field value as written.
func (a Axis) label(i int) string {
	if a.Labels != nil {
		return a.Labels[i]
	}
	return paramValue(a.Values[i])
}

// variantsNode writes a variant axis back as the mapping it was read from.
func (a Axis) variantsNode() *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i, v := range a.Values {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: a.Labels[i]}, v)
	}
	return n
}

// variantsJSON writes a variant axis as an object of labels to the fields each sets.
func variantsJSON(a Axis) ([]byte, error) {
	var b strings.Builder
	b.WriteString("{")
	for i, v := range a.Values {
		var m any
		if err := v.Decode(&m); err != nil {
			return nil, err
		}
		j, err := json.Marshal(jsonSafe(m))
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString(",")
		}
		l, _ := json.Marshal(a.Labels[i])
		b.Write(l)
		b.WriteString(":")
		b.Write(j)
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}

// jsonSafe turns the map[any]any a YAML mapping may decode into (non-string keys) into what
// encoding/json can write.
func jsonSafe(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = jsonSafe(e)
		}
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = jsonSafe(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = jsonSafe(e)
		}
	}
	return v
}

// variantSetting is one field a variant sets: its dotted key and the node of its value.
type variantSetting struct {
	key  string
	line int
	val  *yaml.Node
}

// settings flattens variant i into the fields it sets: a mapping under a group of fields
// (persistence, an engine's section, a plain struct) becomes one setting per key.
func (a Axis) settings(i int, checks Checks) []variantSetting {
	var out []variantSetting
	var walk func(prefix []string, k, v *yaml.Node)
	walk = func(prefix []string, k, v *yaml.Node) {
		parts := append(append([]string(nil), prefix...), k.Value)
		if v.Kind == yaml.MappingNode && isGroup(parts, checks) {
			for j := 0; j+1 < len(v.Content); j += 2 {
				walk(parts, v.Content[j], v.Content[j+1])
			}
			return
		}
		out = append(out, variantSetting{key: strings.Join(parts, "."), line: k.Line, val: v})
	}
	n := a.Values[i]
	for j := 0; j+1 < len(n.Content); j += 2 {
		walk(nil, n.Content[j], n.Content[j+1])
	}
	return out
}

// isGroup says whether a dotted key names a group of fields rather than one value: an engine's
// section or a part of it, a map (persistence) or a struct read field by field.
func isGroup(parts []string, checks Checks) bool {
	if _, field := yamlFields(reflect.TypeOf(Scenario{}))[parts[0]]; !field {
		return checks.sectionOwner(parts[0])
	}
	v := reflect.ValueOf(&Scenario{}).Elem()
	for _, p := range parts {
		if v.Kind() == reflect.Map {
			return false // a map's key is one setting, even with dots in it
		}
		if v.Kind() != reflect.Struct {
			return false
		}
		fi, ok := yamlFields(v.Type())[p]
		if !ok {
			return false // setField names the unknown field
		}
		v = v.Field(fi)
	}
	return v.Kind() == reflect.Map || v.Kind() == reflect.Struct && !reflect.PointerTo(v.Type()).Implements(unmarshalerType)
}

// checkVariants checks a variant axis before its cells are built: the axis's name is not a
// field, each label is a valid name and each key one a matrix may set.
func (a Axis) checkVariants(checks Checks) Errors {
	field := "matrix." + a.Key
	var errs Errors
	if _, isField := yamlFields(reflect.TypeOf(Scenario{}))[a.Key]; isField || checks.sectionOwner(a.Key) || strings.Contains(a.Key, ".") {
		errs = append(errs, &Error{Field: field, Line: a.Line, Msg: fmt.Sprintf("a mapping of variants is named by a label that is not a field (e.g. system:); %s is a field: give it a list of values", a.Key)})
		return errs
	}
	for i := range a.Values {
		vf := field + "." + a.Labels[i]
		if !validName(a.Labels[i]) {
			errs = append(errs, &Error{Field: vf, Line: a.Values[i].Line, Msg: "a variant's label must be " + nameRule()})
		}
		if len(a.Values[i].Content) == 0 {
			errs = append(errs, &Error{Field: vf, Line: a.Values[i].Line, Msg: "sets no field"})
		}
		seen := map[string]bool{}
		for _, st := range a.settings(i, checks) {
			if seen[st.key] {
				errs = append(errs, &Error{Field: vf + "." + st.key, Line: st.line, Msg: "is set twice in one variant"})
			}
			seen[st.key] = true
			if err := checkSweepable(st.key, checks); err != nil {
				errs = append(errs, &Error{Field: vf + "." + st.key, Line: st.line, Msg: err.Error()})
			}
		}
	}
	return errs
}

// setVariant applies variant i of axis a to a cell's scenario.
func (s *Scenario) setVariant(a Axis, i int, checks Checks) Errors {
	var errs Errors
	for _, st := range a.settings(i, checks) {
		s.keys[strings.Split(st.key, ".")[0]] = st.line // set is written
		if err := setField(s, st.key, st.val); err != nil {
			errs = append(errs, &Error{Field: fmt.Sprintf("matrix.%s.%s.%s", a.Key, a.Labels[i], st.key), Line: st.line, Msg: err.Error()})
		}
	}
	return errs
}

// pointAt makes a cell's error about a field that variant i set point at the variant's line.
func (a Axis) pointAt(e *Error, i int, checks Checks) {
	for _, st := range a.settings(i, checks) {
		top := strings.Split(st.key, ".")[0]
		if e.Field == st.key || strings.HasPrefix(e.Field, st.key+".") || e.Field == top || strings.HasPrefix(st.key, e.Field+".") {
			e.Line = st.line
			e.Field = fmt.Sprintf("matrix.%s.%s.%s", a.Key, a.Labels[i], e.Field)
			return
		}
	}
}

// variantsSet says whether some variant axis sets the key (engine, design).
func (s *Scenario) variantsSet(key string) bool {
	for _, a := range s.Matrix.Axes {
		for _, v := range a.Values {
			if a.Labels != nil && mappingValue(v, key) != nil {
				return true
			}
		}
	}
	return false
}

// variantSets says whether some variant of the axis sets the field (or a part or group of it):
// the base scenario's problem there is the cells' to report, each with its own value.
func (a Axis) variantSets(field string, checks Checks) bool {
	for i := range a.Labels {
		for _, st := range a.settings(i, checks) {
			if field == st.key || strings.HasPrefix(field, st.key+".") || strings.HasPrefix(st.key, field+".") {
				return true
			}
		}
	}
	return false
}
