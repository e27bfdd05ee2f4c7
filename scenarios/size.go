package scenarios

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Size is message_size: a number of bytes, or a distribution of sizes drawn per message, seeded:
//
//	message_size: 256
//	message_size: {dist: uniform, min: 64, max: 4096}
//	message_size: {dist: lognormal, median: 256, sigma: 1}          # max defaults to median x e^(4 sigma)
//	message_size: {dist: weighted, sizes: [{size: 100, weight: 9}, {size: 10000, weight: 1}]}
type Size struct {
	// Value is a fixed size (Dist "" or "fixed").
	Value  int     `yaml:"value,omitempty" json:"value,omitempty"`
	Dist   string  `yaml:"dist,omitempty" json:"dist,omitempty"`
	Min    int     `yaml:"min,omitempty" json:"min,omitempty"`
	Max    int     `yaml:"max,omitempty" json:"max,omitempty"`
	Median int     `yaml:"median,omitempty" json:"median,omitempty"`
	Sigma  float64 `yaml:"sigma,omitempty" json:"sigma,omitempty"`
	// Sizes are a weighted list's sizes and their relative weights.
	Sizes []WeightedSize `yaml:"sizes,omitempty" json:"sizes,omitempty"`
}

// WeightedSize is one size of a weighted list.
type WeightedSize struct {
	Size   int     `yaml:"size" json:"size"`
	Weight float64 `yaml:"weight" json:"weight"`
}

// Fixed is a fixed size of n bytes.
func Fixed(n int) Size { return Size{Value: n} }

// IsFixed says every message has the same size.
func (z Size) IsFixed() bool { return z.Dist == "" || z.Dist == "fixed" }

// Largest is the largest size a message can have: producers size their buffers for it.
func (z Size) Largest() int {
	switch z.Dist {
	case "uniform":
		return z.Max
	case "lognormal":
		if z.Max > 0 {
			return z.Max
		}
		// Saturated: an unvalidated sigma must not overflow into a small (or negative) size.
		return int(min(math.Ceil(float64(z.Median)*math.Exp(4*z.Sigma)), math.MaxInt32))
	case "weighted":
		m := 0
		for _, w := range z.Sizes {
			m = max(m, w.Size)
		}
		return m
	}
	return z.Value
}

// Smallest is the smallest size a message can have.
func (z Size) Smallest() int {
	switch z.Dist {
	case "uniform":
		return z.Min
	case "lognormal":
		return MinMessageSize // draws below the stamp are raised to it
	case "weighted":
		m := math.MaxInt
		for _, w := range z.Sizes {
			m = min(m, w.Size)
		}
		return m
	}
	return z.Value
}

func (z Size) String() string {
	if z.IsFixed() {
		return fmt.Sprint(z.Value)
	}
	b, _ := yaml.Marshal(z)
	return strings.TrimSpace(string(b))
}

// UnmarshalYAML accepts a number of bytes or a distribution mapping (unknown keys refused).
func (z *Size) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if err := wholeNumber(n); err != nil {
			return fmt.Errorf("line %d: message_size %v", n.Line, err)
		}
		var v int
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: message_size must be a number of bytes or a distribution {dist: uniform|lognormal|weighted, ...}, not %q", n.Line, n.Value)
		}
		*z = Size{Value: v}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: message_size must be a number of bytes or a distribution mapping", n.Line)
	}
	known := yamlFieldsOf(Size{})
	for i := 0; i+1 < len(n.Content); i += 2 {
		if _, ok := known[n.Content[i].Value]; !ok {
			return fmt.Errorf("line %d: unknown field %s (known: %s)", n.Content[i].Line, n.Content[i].Value, strings.Join(sortedKeys(known), ", "))
		}
	}
	type plain Size // no UnmarshalYAML: decode the fields
	var whole error
	checkWhole(n, reflect.TypeOf(plain{}), "message_size", func(v *yaml.Node, path string, err error) {
		if whole == nil {
			whole = fmt.Errorf("line %d: %s %v", v.Line, path, err)
		}
	})
	if whole != nil {
		return whole
	}
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*z = Size(p)
	return nil
}

// MarshalYAML writes a fixed size as its number.
func (z Size) MarshalYAML() (any, error) {
	if z.IsFixed() {
		return z.Value, nil
	}
	type plain Size
	return plain(z), nil
}

// Payload is what fills a message after its stamp.
type Payload struct {
	// Content is random (the default: incompressible bytes) or compressible.
	Content string `yaml:"content,omitempty" json:"content,omitempty"`
	// Ratio is the compressible content's target compression ratio (default 4): of every
	// 64 bytes, 64/Ratio are random and the rest repeat one byte.
	Ratio float64 `yaml:"ratio,omitempty" json:"ratio,omitempty"`
}

func (s *Scenario) validateSize(bad func(field, format string, args ...any)) {
	z := s.MessageSize
	const most = 64 << 20
	switch z.Dist {
	case "", "fixed":
		if z.Value < MinMessageSize {
			bad("message_size", "must be at least %d bytes, the size of the stamp each message carries (got %d)", MinMessageSize, z.Value)
		}
	case "uniform":
		if z.Min < MinMessageSize || z.Max < z.Min {
			bad("message_size.min", "a uniform size needs %d <= min <= max (got %d to %d)", MinMessageSize, z.Min, z.Max)
		}
	case "lognormal":
		if z.Median < MinMessageSize || z.Median > most {
			bad("message_size.median", "a lognormal size needs a median from %d bytes to 64 MiB (got %d)", MinMessageSize, z.Median)
		}
		// No sigma is no spread: every message the median, a fixed size written as a distribution.
		if !(z.Sigma > 0 && z.Sigma <= 4) {
			bad("message_size.sigma", "a lognormal size needs sigma, the spread of the size's log, above 0 and at most 4 (got %g); for one size write message_size: %d", z.Sigma, z.Median)
		}
		if z.Max != 0 && z.Max < z.Median {
			bad("message_size.max", "must be at least the median %d (got %d)", z.Median, z.Max)
		}
	case "weighted":
		if len(z.Sizes) == 0 {
			bad("message_size.sizes", "a weighted size needs sizes: [{size: 100, weight: 9}, ...]")
		}
		for i, w := range z.Sizes {
			f := fmt.Sprintf("message_size.sizes.%d", i)
			if w.Size < MinMessageSize {
				bad(f+".size", "must be at least %d bytes (got %d)", MinMessageSize, w.Size)
			}
			if !(w.Weight >= MinWeight && w.Weight <= MaxWeight) {
				bad(f+".weight", "must be a relative weight from %g to %g (got %g)", MinWeight, MaxWeight, w.Weight)
			}
		}
	default:
		bad("message_size.dist", "must be fixed, uniform, lognormal or weighted (got %q)", z.Dist)
	}
	if z.Largest() > most {
		bad("message_size", "must be at most 64 MiB (the largest is %d)", z.Largest())
	}
	switch s.Payload.Content {
	case "random":
		// A ratio is allowed and unused: a matrix over content shares it (sizes.yaml).
		if s.Payload.Ratio != 0 && !(s.Payload.Ratio >= 1 && s.Payload.Ratio <= 64) {
			bad("payload.ratio", "must be between 1 and 64 (got %g)", s.Payload.Ratio)
		}
	case "compressible":
		if !(s.Payload.Ratio >= 1 && s.Payload.Ratio <= 64) {
			bad("payload.ratio", "must be between 1 and 64 (got %g)", s.Payload.Ratio)
		}
	default:
		bad("payload.content", "must be random or compressible (got %q)", s.Payload.Content)
	}
}

func yamlFieldsOf(v any) map[string]int { return yamlFields(reflect.TypeOf(v)) }

// MarshalJSON writes a fixed size as a plain number, as result files always had it, so that
// readers of older results and of newer ones see the same field; a distribution as an object.
func (z Size) MarshalJSON() ([]byte, error) {
	if z.IsFixed() {
		return json.Marshal(z.Value)
	}
	type plain Size
	return json.Marshal(plain(z))
}

// UnmarshalJSON reads a number (a fixed size) or a distribution object.
func (z *Size) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*z = Fixed(n)
		return nil
	}
	type plain Size
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*z = Size(p)
	return nil
}
