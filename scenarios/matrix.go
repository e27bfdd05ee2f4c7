package scenarios

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// MaxRepeat bounds repeat:, MaxCells the number of cells a matrix expands into.
const (
	MaxRepeat = 100
	MaxCells  = 1000
)

// Matrix is a sweep: each axis is a scenario field and the values it takes. The scenario expands
// into one cell per combination, axes varying in the order written (the last fastest):
//
//	matrix:
//	  design: [stream, list]
//	  rate: [1000, 2000, 4000]
//	  persistence.appendfsync: [always, everysec]
type Matrix struct {
	Axes []Axis
}

// Axis is one swept field: a field name as written in the scenario ("rate", "redis.stream.ack") or a
// persistence setting ("persistence.appendfsync"). A variant axis (Labels set) is named by a
// free label instead, and each of its values is a mapping of fields set together (variant.go).
type Axis struct {
	Key    string
	Line   int
	Values []*yaml.Node
	// Labels name a variant axis's values, one per value; nil for a field axis.
	Labels []string
}

// Cell is one combination of a matrix, as a complete scenario.
type Cell struct {
	// Params are the axis values of this cell, in axis order.
	Params []Param
	// Name labels the cell: "design=list,rate=2000" ("" for a scenario without a matrix).
	Name     string
	Scenario *Scenario
}

// Param is one axis value.
type Param struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// UnmarshalYAML keeps the axes in the order written, with their lines.
func (m *Matrix) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: matrix must map field names to lists of values", n.Line)
	}
	m.Axes = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		a := Axis{Key: k.Value, Line: k.Line}
		switch v.Kind {
		case yaml.SequenceNode:
			a.Values = v.Content
		case yaml.ScalarNode:
			a.Values = []*yaml.Node{v}
		case yaml.MappingNode:
			if err := a.readVariants(v); err != nil {
				return err
			}
		default:
			return fmt.Errorf("line %d: matrix.%s must be a list of values, or a mapping of labels to variants", v.Line, k.Value)
		}
		m.Axes = append(m.Axes, a)
	}
	return nil
}

// MarshalYAML writes the axes back as a mapping.
func (m Matrix) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, a := range m.Axes {
		var vals *yaml.Node
		if a.Labels != nil {
			vals = a.variantsNode()
		} else {
			vals = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: a.Values}
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: a.Key}, vals)
	}
	return n, nil
}

// MarshalJSON writes the axes as an object of value lists (for the scenario in a result).
func (m Matrix) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString("{")
	for i, a := range m.Axes {
		if i > 0 {
			b.WriteString(",")
		}
		if a.Labels != nil {
			v, err := variantsJSON(a)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&b, "%q:%s", a.Key, v)
			continue
		}
		fmt.Fprintf(&b, "%q:[", a.Key)
		for j, v := range a.Values {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%q", v.Value)
		}
		b.WriteString("]")
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}

// IsZero lets omitempty leave out an empty matrix.
func (m Matrix) IsZero() bool { return len(m.Axes) == 0 }

// sweptFields are the scenario fields a matrix may not sweep: they name or shape the sweep itself.
var unsweepable = map[string]bool{"name": true, "description": true, "matrix": true, "repeat": true, "gates": true, "faults": true}

// Cells expands the matrix into complete scenarios (defaults filled). A scenario without a
// matrix is one cell. Each cell's scenario has no matrix and is named base/cell.
func (s *Scenario) Cells() ([]Cell, error) {
	cells, errs := s.expand(s.checks)
	if len(errs) > 0 {
		return nil, errs
	}
	return cells, nil
}

func (s *Scenario) expand(checks Checks) ([]Cell, Errors) {
	if len(s.Matrix.Axes) == 0 {
		return []Cell{{Scenario: s}}, nil
	}
	var errs Errors
	n := 1
	seen := map[string]bool{}
	for _, a := range s.Matrix.Axes {
		field := "matrix." + a.Key
		if seen[a.Key] {
			errs = append(errs, &Error{Field: field, Line: a.Line, Msg: "swept twice"})
		}
		seen[a.Key] = true
		if len(a.Values) == 0 {
			errs = append(errs, &Error{Field: field, Line: a.Line, Msg: "needs at least one value"})
		}
		// Two cells with one label would write one result file, the second over the first.
		labels := make(map[string]int, len(a.Values))
		for i, v := range a.Values {
			l := a.label(i)
			if j, dup := labels[l]; dup {
				errs = append(errs, &Error{Field: fmt.Sprintf("%s.%d", field, i), Line: v.Line, See: fmt.Sprintf("%s.%d", field, j), SeeLine: a.Values[j].Line,
					Msg: fmt.Sprintf("repeats the value %s of %s.%d: the two cells would be one, their result files written over each other (use repeat: to run a cell more than once)", l, field, j)})
				continue
			}
			labels[l] = i
		}
		if a.Labels != nil {
			errs = append(errs, a.checkVariants(checks)...)
		} else if err := checkSweepable(a.Key, checks); err != nil {
			errs = append(errs, &Error{Field: field, Line: a.Line, Msg: err.Error()})
		}
		if n <= MaxCells { // saturate: many axes must not overflow the count
			n *= max(1, len(a.Values))
		}
	}
	if n > MaxCells {
		errs = append(errs, &Error{Field: "matrix", Msg: fmt.Sprintf("expands into more than %d cells", MaxCells)})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var cells []Cell
	idx := make([]int, len(s.Matrix.Axes))
	for {
		c, cellErrs := s.cell(idx, checks)
		errs = append(errs, cellErrs...)
		if c != nil {
			cells = append(cells, *c)
		}
		// Advance the odometer, last axis fastest.
		k := len(idx) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < len(s.Matrix.Axes[k].Values) {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			break
		}
	}
	return cells, errs
}

// cell builds the scenario of one combination and validates it; errors point at the value.
func (s *Scenario) cell(idx []int, checks Checks) (*Cell, Errors) {
	c := s.clone()
	c.designSwept = s.sweepsDesign()
	c.Matrix = Matrix{}
	var params []Param
	var errs Errors
	for i, a := range s.Matrix.Axes {
		v := a.Values[idx[i]]
		params = append(params, Param{Key: a.Key, Value: a.label(idx[i])})
		if a.Labels != nil {
			errs = append(errs, c.setVariant(a, idx[i], checks)...)
			continue
		}
		c.keys[strings.Split(a.Key, ".")[0]] = a.Line // swept is written
		if err := setField(c, a.Key, v); err != nil {
			errs = append(errs, &Error{Field: fmt.Sprintf("matrix.%s.%d", a.Key, idx[i]), Line: v.Line, Msg: err.Error()})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var names []string
	for _, p := range params {
		names = append(names, p.Key+"="+p.Value)
	}
	cellName := strings.Join(names, ",")
	c.Name = s.Name + "/" + cellName
	c.ApplyDefaults()
	for _, e := range c.validate(checks) {
		// A cell's problem is the value that made it: point there.
		for i, a := range s.Matrix.Axes {
			if a.Labels != nil {
				a.pointAt(e, idx[i], checks)
				continue
			}
			if e.Field == a.Key || strings.HasPrefix(e.Field, a.Key+".") {
				e.Line = a.Values[idx[i]].Line
				e.Field = fmt.Sprintf("matrix.%s.%d", a.Key, idx[i])
			}
		}
		e.Msg += " (in cell " + cellName + ")"
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &Cell{Params: params, Name: cellName, Scenario: c}, nil
}

// clone deep-copies the parts of a scenario a cell may change.
func (s *Scenario) clone() *Scenario {
	c := *s
	if s.Persistence != nil {
		c.Persistence = make(map[string]string, len(s.Persistence))
		for k, v := range s.Persistence {
			c.Persistence[k] = v
		}
	}
	c.Names = maps.Clone(s.Names) // a matrix may sweep names.stream
	c.Faults = append([]Fault(nil), s.Faults...)
	c.Gates = append([]string(nil), s.Gates...)
	c.keys = make(map[string]int, len(s.keys))
	for k, v := range s.keys {
		c.keys[k] = v
	}
	c.Options, c.optionsKey = nil, "" // decoded again for the cell
	return &c
}

func checkSweepable(key string, checks Checks) error {
	parts := strings.Split(key, ".")
	if unsweepable[parts[0]] {
		return fmt.Errorf("%s cannot be swept", parts[0])
	}
	if _, field := yamlFields(reflect.TypeOf(Scenario{}))[parts[0]]; !field && checks.sectionOwner(parts[0]) {
		if len(parts) < 2 {
			return fmt.Errorf("%s is a group of fields; sweep one of them", key)
		}
		return nil // an engine's section: its engine checks each cell's value
	}
	_, _, err := fieldFor(reflect.ValueOf(&Scenario{}).Elem(), parts)
	return err
}

// fieldFor finds the struct field for a dotted yaml path. A map field (persistence) takes the
// rest of the path as its key, returned as mapKey.
func fieldFor(v reflect.Value, parts []string) (f reflect.Value, mapKey string, err error) {
	for i, p := range parts {
		if v.Kind() == reflect.Map {
			return v, strings.Join(parts[i:], "."), nil
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, "", fmt.Errorf("%s has no field %s", strings.Join(parts[:i], "."), p)
		}
		fields := yamlFields(v.Type())
		fi, ok := fields[p]
		if !ok {
			return reflect.Value{}, "", fmt.Errorf("unknown field %s (known: %s)", strings.Join(parts[:i+1], "."), strings.Join(sortedKeys(fields), ", "))
		}
		v = v.Field(fi)
	}
	switch {
	case v.Kind() == reflect.Map:
		example := map[string]string{"persistence": "appendfsync"}[parts[0]] // names: keys are the engine's
		return reflect.Value{}, "", fmt.Errorf("sweep one setting, e.g. %s.%s", strings.Join(parts, "."), cmp.Or(example, "<key>"))
	case v.Kind() == reflect.Struct && !reflect.PointerTo(v.Type()).Implements(unmarshalerType):
		return reflect.Value{}, "", fmt.Errorf("%s is a group of fields; sweep one of them", strings.Join(parts, "."))
	}
	return v, "", nil
}

// setField decodes a matrix value into the scenario field its key names.
func setField(s *Scenario, key string, val *yaml.Node) error {
	parts := strings.Split(key, ".")
	if _, field := yamlFields(reflect.TypeOf(Scenario{}))[parts[0]]; !field && len(parts) > 1 {
		s.setSection(parts, val)
		return nil
	}
	f, mapKey, err := fieldFor(reflect.ValueOf(s).Elem(), parts)
	if err != nil {
		return err
	}
	if nullValue(val) {
		return fmt.Errorf("has no value (null): write a value")
	}
	if isIntKind(f.Kind()) && f.Type() != durationType {
		if err := wholeNumber(val); err != nil {
			return err
		}
	}
	if f.Kind() == reflect.Map {
		var sv string
		if err := val.Decode(&sv); err != nil {
			return fmt.Errorf("%s", cleanYAMLErr(err))
		}
		if f.IsNil() {
			f.Set(reflect.MakeMap(f.Type()))
		}
		f.SetMapIndex(reflect.ValueOf(mapKey), reflect.ValueOf(sv))
		return nil
	}
	if err := val.Decode(f.Addr().Interface()); err != nil {
		return fmt.Errorf("%s", cleanYAMLErr(err))
	}
	return nil
}

// validateSweep checks repeat: and the matrix. Problems of the base scenario in fields the
// matrix sets are dropped (a matrix over rate needs no rate outside it); each cell is validated
// instead, its errors pointing at the value that made it.
func (s *Scenario) validateSweep(base Errors, checks Checks) Errors {
	if s.Repeat < 0 || s.Repeat > MaxRepeat {
		base = append(base, &Error{Field: "repeat", Msg: fmt.Sprintf("must be between 1 and %d (got %d)", MaxRepeat, s.Repeat)})
	}
	if len(s.Matrix.Axes) == 0 {
		return base
	}
	var kept Errors
	for _, e := range base {
		swept := false
		for _, a := range s.Matrix.Axes {
			if e.Field == a.Key || strings.HasPrefix(e.Field, a.Key+".") || a.variantSets(e.Field, checks) {
				swept = true
			}
		}
		if !swept {
			kept = append(kept, e)
		}
	}
	if len(kept) > 0 {
		return kept // the base scenario itself is wrong; cells would repeat it
	}
	_, errs := s.expand(checks)
	return errs
}

// paramValue labels a cell by its value: a scalar as written, a mapping or list (a size
// distribution, a list of steps) in compact flow style, so that two such values name two cells.
func paramValue(v *yaml.Node) string {
	if v.Kind == yaml.ScalarNode {
		return v.Value
	}
	c := *v
	c.Style = yaml.FlowStyle
	b, err := yaml.Marshal(&c)
	if err != nil {
		return v.Value
	}
	return strings.TrimSpace(string(b))
}
