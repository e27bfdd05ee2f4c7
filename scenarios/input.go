package scenarios

import (
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Limits on the input itself, checked before a scenario's values are: a file past them is a
// mistake or an attack, and would cost memory or time before any run starts.
const (
	// MaxFileBytes is the largest scenario file read: a scenario is a page of settings, and a
	// larger file is refused before it is read whole.
	MaxFileBytes = 1 << 20
	// MaxFaults bounds faults:, far more than any plan needs; past it a file is generated or hostile.
	MaxFaults = 10_000
	// MaxNameLen bounds name:, which labels results, file names and manifests.
	MaxNameLen = 100
	// MinRate is the lowest positive offered rate, in messages per second (one message every
	// 1000 s, 86 in the longest run): far below it (1e-300) the schedule's times overflow.
	MinRate = 0.001
	// MinWeight and MaxWeight bound a weighted size's relative weights.
	MinWeight = 1e-6
	MaxWeight = 1e6
)

// readLimited reads a scenario file, refusing one over MaxFileBytes before reading it whole.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		return nil, &Error{File: path, Msg: fileTooLarge(st.Size())}
	}
	// A pipe or device has no size: read one byte past the limit to know.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{File: path, Msg: fileTooLarge(-1)}
	}
	return data, nil
}

func fileTooLarge(size int64) string {
	got := "more"
	if size >= 0 {
		got = strconv.FormatInt(size, 10) + " bytes"
	}
	return fmt.Sprintf("the file is larger than a scenario can be, %d bytes (got %s)", MaxFileBytes, got)
}

// secondDocument refuses anything after the first YAML document: it would be ignored silently.
// dec has decoded the first.
func secondDocument(file string, data []byte, dec *yaml.Decoder) *Error {
	var extra yaml.Node
	err := dec.Decode(&extra)
	if err == io.EOF {
		return nil
	}
	var line int
	if err != nil {
		line = yamlErrLine(err)
	} else {
		line = extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
	}
	// Point at the --- that starts it: the last one at or before the line found.
	lines := strings.Split(string(data), "\n")
	for i := min(max(line, 1), len(lines)) - 1; i >= 0; i-- {
		if l := lines[i]; l == "---" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "---\t") || strings.HasPrefix(l, "---\r") {
			line = i + 1
			break
		}
	}
	return &Error{File: file, Line: max(line, 1), Msg: "a second YAML document starts here: a scenario file holds one document (write one file per scenario, or a matrix: to sweep)"}
}

// validName says whether a scenario name is in the documented character set: ASCII letters,
// digits, '-', '_', '.' and space, starting with a letter or digit, at most MaxNameLen bytes.
// The name labels results and reaches file names, Kubernetes manifests and reports, so it holds
// nothing any of those formats would need to escape.
func validName(name string) bool {
	if name == "" || len(name) > MaxNameLen || !isAlnum(name[0]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' && c != ' ' {
			return false
		}
	}
	return name[len(name)-1] != ' '
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func nameRule() string {
	return fmt.Sprintf("1 to %d characters from A-Z a-z 0-9 - _ . and space, starting with a letter or digit and not ending with a space", MaxNameLen)
}

// checkName checks name: as written. A name the file name gave (no name: key) is made valid
// instead (nameFromFile): the user wrote no name to refuse.
func checkName(file string, root *yaml.Node, s *Scenario) *Error {
	if validName(s.Name) {
		return nil
	}
	if k := findKey(root, "name"); k != nil {
		return &Error{File: file, Line: k.Line, Field: "name", Msg: fmt.Sprintf("must be %s (got %q)", nameRule(), s.Name)}
	}
	s.Name = nameFromFile(s.Name)
	return nil
}

// nameFromFile makes a file name a valid scenario name: each character outside the set becomes
// '_', leading ones that are not a letter or digit and trailing spaces go, and it is cut to
// MaxNameLen; "scenario" when nothing is left.
func nameFromFile(base string) string {
	b := []byte(base)
	for i, c := range b {
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' && c != ' ' {
			b[i] = '_'
		}
	}
	for len(b) > 0 && !isAlnum(b[0]) {
		b = b[1:]
	}
	if len(b) > MaxNameLen {
		b = b[:MaxNameLen]
	}
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "scenario"
	}
	return string(b)
}

// nullValue refuses a key written with no value (engine: null, engine: ~, engine:): YAML decodes
// it to the zero value, which for most fields silently means "the default".
func nullValue(val *yaml.Node) bool {
	return val.Kind == yaml.ScalarNode && val.ShortTag() == "!!null"
}

// wholeNumber refuses a fraction (producers: 2.5) where an integer is taken: YAML would
// truncate it silently. A whole float (1e3) is accepted.
func wholeNumber(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
		return nil
	}
	var f float64
	if err := n.Decode(&f); err != nil {
		return nil // the decoder reports it
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("must be a whole number (got %s)", n.Value)
	}
	return nil
}

func isIntKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

var (
	durationType = reflect.TypeOf(Duration(0))
	matrixType   = reflect.TypeOf(Matrix{})
	nodeType     = reflect.TypeOf(yaml.Node{})
	// timeDurationType is an engine's own duration (its section's): bounded as Duration is.
	timeDurationType = reflect.TypeOf(time.Duration(0))
)

// checkWhole walks n against the type it decodes into, refusing a fraction for every integer
// field (see wholeNumber). Types with their own UnmarshalYAML check their own values (Size), or
// take no integers (Duration, Rate).
func checkWhole(n *yaml.Node, t reflect.Type, path string, report func(n *yaml.Node, path string, err error)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	switch {
	case isIntKind(t.Kind()):
		if err := wholeNumber(n); err != nil {
			report(n, path, err)
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if idx, ok := fields[n.Content[i].Value]; ok {
				checkWhole(n.Content[i+1], t.Field(idx).Type, join(path, n.Content[i].Value), report)
			}
		}
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			checkWhole(item, t.Elem(), fmt.Sprintf("%s.%d", path, i), report)
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			checkWhole(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), report)
		}
	}
}

// checkNumbers walks a decoded value and reports every float that is not finite and every
// duration longer than MaxDuration, by its field path. Field-specific bounds are checked where
// each field is validated; these hold for every field, an engine's own section's included.
func checkNumbers(v reflect.Value, path string, bad func(field, format string, args ...any)) {
	checkNumbersDepth(v, path, bad, 0)
}

func checkNumbersDepth(v reflect.Value, path string, bad func(field, format string, args ...any), depth int) {
	if depth > 32 || !v.IsValid() {
		return
	}
	if v.Type() == matrixType || v.Type() == nodeType {
		return // yaml nodes: a matrix's values are checked in each cell
	}
	if v.Type() == durationType || v.Type() == timeDurationType {
		if d := Duration(v.Int()); d > Duration(MaxDuration) {
			bad(path, "must be at most %s (got %s)", MaxDuration, d)
		}
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			bad(path, "must be a finite number (got %s)", strconv.FormatFloat(f, 'g', -1, 64))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkNumbersDepth(v.Elem(), path, bad, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if name == "-" {
				continue // Sections and Options are checked where they are decoded
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if f.Anonymous || (t == reflect.TypeOf(Rate{})) || (t == reflect.TypeOf(Size{}) && name == "value") {
				name = "" // the field is its parent, as written
			}
			sub := path
			if name != "" {
				sub = join(path, name)
			}
			checkNumbersDepth(v.Field(i), sub, bad, depth+1)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			checkNumbersDepth(v.Index(i), fmt.Sprintf("%s.%d", path, i), bad, depth+1)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			checkNumbersDepth(iter.Value(), join(path, fmt.Sprint(iter.Key().Interface())), bad, depth+1)
		}
	}
}

// checkFaultKeys refuses a key written on a fault whose kind does not read it (a consumer: on
// a stall): it would be ignored silently. It works on the nodes, because a key written as 0 is
// still written.
func checkFaultKeys(file string, root *yaml.Node) Errors {
	faults := mappingValue(root, "faults")
	if root.Kind != yaml.MappingNode || faults == nil || faults.Kind != yaml.SequenceNode {
		return nil
	}
	var errs Errors
	for i, f := range faults.Content {
		if f.Kind != yaml.MappingNode {
			continue
		}
		kindNode := mappingValue(f, "kind")
		if kindNode == nil {
			continue
		}
		kind := FaultKind(kindNode.Value)
		traits, known := kind.Traits()
		if !known {
			continue // validate names the unknown kind
		}
		for j := 0; j+1 < len(f.Content); j += 2 {
			k := f.Content[j]
			var takes bool
			var which string
			switch k.Value {
			case "consumer":
				takes, which = traits.ConsumerSide, "consumer faults ("+kindList(func(t FaultTraits, _ FaultKind) bool { return t.ConsumerSide })+")"
			case "point":
				takes, which = kind == FaultConsumerCrash || kind == FaultIOError, "consumer-crash and io-error"
			case "restart_after":
				takes, which = kind == FaultConsumerCrash || traits.RestartsDead, "consumer-crash, "+kindList(func(t FaultTraits, _ FaultKind) bool { return t.RestartsDead })
			case "work":
				takes, which = kind == FaultSlowConsumer, "slow-consumer"
			case "command":
				takes, which = kind == FaultCommand, "command"
			case "shard":
				takes, which = traits.HitsShard, shardKindList()
			case "replicas_behind":
				takes, which = holdsReplicas(kind), "primary-kill and partition-leader-kill"
			case "segment":
				// A consumer fault fires where its consumer runs: the segment is not the plan's to pick.
				takes, which = !traits.ConsumerSide, "engine-side faults (a consumer fault fires in the segment that runs its consumer)"
			default:
				continue
			}
			if !takes {
				errs = append(errs, &Error{File: file, Line: k.Line, Field: fmt.Sprintf("faults.%d.%s", i, k.Value),
					Msg: fmt.Sprintf("a %s does not take %s (only %s do); it would be ignored", kind, k.Value, which)})
			}
		}
	}
	return errs
}

func kindList(keep func(FaultTraits, FaultKind) bool) string {
	var names []string
	for _, k := range FaultKinds {
		if keep(faultTraits[k], k) {
			names = append(names, string(k))
		}
	}
	return strings.Join(names, ", ")
}
