package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Error is a problem in a scenario file, located by file, line and field path.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
	// See names another field the error is about (the other of two overlapping faults), and
	// SeeLine its line.
	See     string
	SeeLine int
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	msg := e.Msg
	if e.See != "" && e.SeeLine > 0 {
		msg += fmt.Sprintf(" (%s is at line %d)", e.See, e.SeeLine)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", loc, msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, msg)
}

// Errors is every problem found in one file.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Load reads, strictly decodes, defaults and validates a scenario file.
func Load(path string, c Checks) (*Scenario, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, c)
}

// Parse decodes a scenario from data; file names the source in errors. Unknown keys, wrong
// types and impossible values are all reported, each with its line and field. The engine, its
// sections and the gates are checked with c (see Checks).
func Parse(file string, data []byte, c Checks) (*Scenario, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{File: file, Msg: fileTooLarge(int64(len(data)))}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "the file is empty: a scenario needs at least a rate (see scenarios/quickstart.yaml)"}
		}
		return nil, syntaxError(file, data, err)
	}
	if err := secondDocument(file, data, dec); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: file, Msg: "empty scenario"}
	}
	root := doc.Content[0]
	s := &Scenario{keys: map[string]int{}, checks: c, dir: filepath.Dir(file)}
	d := decoder{file: file}
	warnings, errs := moveKeys(file, root, c)
	if len(errs) > 0 {
		return nil, errs
	}
	s.Deprecated = warnings
	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			s.keys[root.Content[i].Value] = root.Content[i].Line
		}
	}
	// A top-level mapping no field takes is an engine's own section (kafka:), kept as written
	// for the engine's registration to decode.
	d.section = func(key string, val *yaml.Node) bool {
		if !c.sectionOwner(key) || val.Kind != yaml.MappingNode {
			return false
		}
		if s.Sections == nil {
			s.Sections = map[string]*yaml.Node{}
		}
		s.Sections[key] = val
		return true
	}
	d.decodeStruct(root, reflect.ValueOf(s).Elem(), "")
	d.errs = append(d.errs, checkFaultKeys(file, root)...)
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	// Zero means "default" only when a key is absent; written out, these zeros are impossible.
	for _, f := range []struct {
		key  string
		zero bool
	}{
		{"duration", s.Duration == 0}, {"producers", s.Producers == 0}, {"consumers", s.Consumers == 0},
		{"message_size", s.MessageSize.IsFixed() && s.MessageSize.Value == 0}, {"rate", !s.Rate.Max && s.Rate.PerSecond == 0},
		{"batch", s.Batch == 0}, {"repeat", s.Repeat == 0},
	} {
		if k := findKey(root, f.key); k != nil && f.zero {
			d.errs = append(d.errs, &Error{File: file, Line: k.Line, Field: f.key, Msg: "must be positive (got 0)"})
		}
	}
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if err := checkName(file, root, s); err != nil {
		return nil, err
	}
	s.ApplyDefaults()
	if errs := s.validate(c); len(errs) > 0 {
		for _, e := range errs {
			e.File = file
			if e.Line == 0 { // a matrix cell's error already points at its value
				e.Line = lineOf(root, e.Field)
			}
			if e.See != "" && e.SeeLine == 0 {
				e.SeeLine = lineOf(root, e.See)
			}
			if e.Field == "rate" && findKey(root, "rate") == nil && !s.Profile.Set() && !s.Rate.Max && s.Rate.PerSecond == 0 {
				e.Msg = "is required: messages per second over all producers, or max for a closed loop"
			}
		}
		return nil, errs
	}
	s.file = file
	for i := range s.Faults {
		s.Faults[i].line = lineOf(root, fmt.Sprintf("faults.%d.segment", i))
	}
	return s, nil
}

type decoder struct {
	file string
	errs Errors
	// section takes a top-level key that is no field (an engine's section); nil takes none.
	section func(key string, val *yaml.Node) bool
}

// decodeInto decodes n strictly into the value into points at (a struct field by field).
func (d *decoder) decodeInto(n *yaml.Node, into any, path string) {
	v := reflect.ValueOf(into).Elem()
	if v.Kind() == reflect.Struct && !reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
		d.decodeStruct(n, v, path)
		return
	}
	if err := n.Decode(into); err != nil {
		d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Field: path, Msg: cleanYAMLErr(err)})
	}
}

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// decodeStruct walks a mapping node field by field so that every error names its field and line,
// which yaml's own KnownFields mode does not do for nested values.
func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Field: path, Msg: "must be a mapping of keys to values"})
		return
	}
	fields := yamlFields(v.Type())
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		field := join(path, k.Value)
		if line, dup := seen[k.Value]; dup {
			d.errs = append(d.errs, &Error{File: d.file, Line: k.Line, Field: field,
				Msg: fmt.Sprintf("duplicate key: already set on line %d (YAML would keep the last silently)", line)})
			continue
		}
		seen[k.Value] = k.Line
		idx, ok := fields[k.Value]
		if !ok && path == "" && d.section != nil && d.section(k.Value, val) {
			continue
		}
		if !ok {
			d.errs = append(d.errs, &Error{File: d.file, Line: k.Line, Field: field,
				Msg: fmt.Sprintf("unknown field (known: %s)", strings.Join(sortedKeys(fields), ", "))})
			continue
		}
		if nullValue(val) {
			d.errs = append(d.errs, &Error{File: d.file, Line: val.Line, Field: field,
				Msg: "has no value (null): write a value, or leave the key out for the default"})
			continue
		}
		fv := v.Field(idx)
		if fv.Kind() == reflect.Struct && !reflect.PointerTo(fv.Type()).Implements(unmarshalerType) {
			d.decodeStruct(val, fv, field)
			continue
		}
		if fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct && val.Kind == yaml.SequenceNode {
			fv.Set(reflect.MakeSlice(fv.Type(), len(val.Content), len(val.Content)))
			for j, item := range val.Content {
				d.decodeStruct(item, fv.Index(j), fmt.Sprintf("%s.%d", field, j))
			}
			continue
		}
		before := len(d.errs)
		checkWhole(val, fv.Type(), field, func(n *yaml.Node, path string, err error) {
			d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Field: path, Msg: err.Error()})
		})
		if len(d.errs) > before {
			continue
		}
		if err := val.Decode(fv.Addr().Interface()); err != nil {
			var at *Error // a field's own decoder that knows the line and field at fault
			if errors.As(err, &at) {
				at.File = d.file
				d.errs = append(d.errs, at)
				continue
			}
			d.errs = append(d.errs, &Error{File: d.file, Line: val.Line, Field: field, Msg: cleanYAMLErr(err)})
		}
	}
}

func yamlFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			m[tag] = i
		}
	}
	return m
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func findKey(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return nil
}

// lineOf finds the line of a dotted field path in the document, or of the nearest parent.
func lineOf(root *yaml.Node, path string) int {
	n, line := root, root.Line
	for _, part := range strings.Split(path, ".") {
		if n.Kind == yaml.SequenceNode {
			var i int
			if _, err := fmt.Sscanf(part, "%d", &i); err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
			continue
		}
		if n.Kind != yaml.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				line = n.Content[i].Line
				n = n.Content[i+1]
				found = true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}

func cleanYAMLErr(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = stripLine(m)
		}
		return strings.Join(msgs, "; ")
	}
	return stripLine(strings.TrimPrefix(err.Error(), "yaml: "))
}

// stripLine removes yaml's "line N: " prefix; the Error already carries the line.
func stripLine(s string) string {
	if strings.HasPrefix(s, "line ") {
		if i := strings.Index(s, ": "); i > 0 {
			return s[i+2:]
		}
	}
	return s
}

// syntaxError turns the YAML parser's error into one that names the line, and the cause where
// the parser's words do not: a tab, or a file that is not text.
func syntaxError(file string, data []byte, err error) *Error {
	line := yamlErrLine(err)
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = stripLine(msg)
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return &Error{File: file, Line: max(line, 1), Msg: "not a YAML scenario: the file is not UTF-8 text"}
	}
	lines := strings.Split(string(data), "\n")
	if line == 0 {
		line = 1
	}
	if line <= len(lines) && strings.Contains(lines[line-1], "\t") {
		msg += " (this line has a tab: YAML indents with spaces only)"
	}
	return &Error{File: file, Line: line, Msg: msg}
}

func yamlErrLine(err error) int {
	var line int
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i:], "line %d", &line)
	}
	return line
}
