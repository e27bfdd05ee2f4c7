package scenarios

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Checks are what validation needs from outside this package, passed explicitly to Parse and
// Load: the engines (from the engine registry, which this package does not import) and the gate
// parser (from the results package). bench.Checks builds them; a nil field leaves its checks
// out, which only this package's own tests do.
type Checks struct {
	// Engines are the engines a scenario may name. Nil leaves engine, design and the engine
	// sections unchecked, the design as written, and any unknown top-level key an error.
	Engines []*Engine
	// Gate parses a gate expression ("e2e.p99 <= 20ms"); nil leaves gates and knee unparsed.
	Gate func(expr string) error
	// MemoryBudget is --memory-budget in bytes; 0 takes $QBENCH_MEMORY_BUDGET or a share of
	// the machine's available memory (ResolveMemoryBudget).
	MemoryBudget int64
}

// Engine is what scenario validation knows of one engine.
type Engine struct {
	Name string
	// Designs it supports; the first is the default.
	Designs []string
	// Sections are the shared top-level sections it reads (SharedSections). One of them written
	// for an engine that does not read it is an error, not a silent no-op.
	Sections []string
	// Options is the key of its own section (kafka), "" when it has none.
	Options string
	// Decode makes the engine's options from its own section; see engines.Registration.Decode.
	// decode fills a pointer to a struct strictly (unknown keys and wrong types are errors with
	// file and line). Errors with a Field() string method name the key within the section.
	Decode func(decode func(into any) error) (any, error)
	// Check holds what Decode made against the rest of the scenario; see
	// engines.Registration.Check. Errors name keys within the section as Decode's do.
	Check func(options any, p Plan) error
	// Names are the objects of an existing system each design takes, its queue first; see
	// engines.Registration.Names.
	Names map[string][]string
	// CheckNames checks the names given by the engine's rules (Field() names the key under
	// names:); see engines.Registration.CheckNames.
	CheckNames func(p Plan) error
	// Groups is how many receiving groups the options make for a design and a number of
	// consumers (the ledger's size); see engines.Registration.Groups.
	Groups func(options any, design string, consumers int) int
	// Moved are top-level keys of older scenarios that now sit in its own section (stream: in
	// redis:): Parse moves them there with a deprecation warning (moved.go).
	Moved []string
	// Faults are the engine-side fault kinds it can carry out.
	Faults []string
	// NeedsAddress: the engine connects to an existing server at address.
	NeedsAddress bool
	// ClosedLoopBatch and ClosedLoopInFlight are the engine's batch and in_flight for a closed
	// loop (rate: max) whose scenario does not write them; 0 keeps the defaults (closedloop.go).
	ClosedLoopBatch, ClosedLoopInFlight int
}

// Plan is what an engine's Check sees of the scenario around its own section; a copy of
// engines.Plan (this package does not import engines), proved complete by bench's tests.
type Plan struct {
	// Design is the run's design (the engine's default filled in).
	Design string
	// Consumers is the number of consumers.
	Consumers int
	// Names are the scenario's names: (the objects of an existing system), nil for none.
	Names map[string]string
	// Consumes: the run has consumers (its role is both or consume).
	Consumes bool
	// AnyDesign: a matrix sweeps the design, so settings for several designs are in order.
	AnyDesign bool
}

// SharedSections are the scenario's top-level fields that only some engines read (a server's
// durability policy and replicas, the spreading of a queue over keys). Every engine declares
// which of them it reads. They stay top-level, not in an engine's section, because they are
// policy names that matrix axes, reports and the decision table share.
var SharedSections = []string{"persistence", "policy", "replicas", "shards", "shard_routing", "shard_skew"}

// canFault reports whether the engine carries out a fault of this kind: always for a
// consumer-side kind, for an engine-side kind when the engine lists it.
func (e *Engine) canFault(k FaultKind) bool {
	return !k.EngineSide() || slices.Contains(e.Faults, string(k))
}

func (c Checks) engine(name string) (*Engine, error) {
	for _, e := range c.Engines {
		if e.Name == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("unknown engine %q (known: %v)", name, c.names(func(*Engine) bool { return true }))
}

// names lists the engines that satisfy keep, sorted as given (the registry sorts by name).
func (c Checks) names(keep func(*Engine) bool) []string {
	var out []string
	for _, e := range c.Engines {
		if keep(e) {
			out = append(out, e.Name)
		}
	}
	return out
}

// sectionOwner reports whether some engine has key as its own section.
func (c Checks) sectionOwner(key string) bool {
	for _, e := range c.Engines {
		if e.Options == key {
			return true
		}
	}
	return false
}

// validateEngine checks everything that depends on the engine: its name, design, the shared
// sections written, its own section (decoded into s.Options), faults, address. Called with the
// scenario's engine known (not swept by a matrix).
func (s *Scenario) validateEngine(c Checks, bad func(field, format string, args ...any), errs *Errors) {
	if c.Engines == nil {
		return
	}
	e, err := c.engine(s.Engine)
	if err != nil {
		bad("engine", "%v", err)
		return
	}
	if s.Design == "" && len(e.Designs) > 0 {
		s.Design = e.Designs[0]
	}
	if !slices.Contains(e.Designs, s.Design) {
		bad("design", "engine %s has no design %q (known: %s)", s.Engine, s.Design, strings.Join(e.Designs, ", "))
	}
	for _, sec := range SharedSections {
		if _, written := s.keys[sec]; !written || slices.Contains(e.Sections, sec) {
			continue
		}
		readers := c.names(func(o *Engine) bool { return slices.Contains(o.Sections, sec) })
		// Point at the engine's own section only when the setting is another family's (persistence
		// on kafka), not when a sibling of the same section reads it (replicas on redis-url).
		family := slices.ContainsFunc(c.Engines, func(o *Engine) bool { return o.Options == e.Options && slices.Contains(o.Sections, sec) })
		if e.Options != "" && !family {
			bad(sec, "engine %s does not read %s; its settings go under %s: (engines that read %s: %s)", s.Engine, sec, e.Options, sec, strings.Join(readers, ", "))
		} else {
			bad(sec, "engine %s does not read %s (engines that do: %s)", s.Engine, sec, strings.Join(readers, ", "))
		}
	}
	for key := range s.Sections {
		if key == e.Options {
			continue
		}
		owners := c.names(func(o *Engine) bool { return o.Options == key })
		bad(key, "is the section of engine %s; engine %s does not read it", strings.Join(owners, ", "), s.Engine)
	}
	if e.Options != "" && e.Decode != nil {
		s.decodeOptions(e, errs)
	}
	for i, f := range s.Faults {
		if _, known := f.Kind.Traits(); known && !e.canFault(f.Kind) {
			can := c.names(func(o *Engine) bool { return o.canFault(f.Kind) })
			bad(fmt.Sprintf("faults.%d.kind", i), "engine %s cannot carry out fault kind %s (engines that can: %s)", s.Engine, f.Kind, strings.Join(can, ", "))
		}
	}
	if e.NeedsAddress && s.Address == "" {
		bad("address", "is required for engine %s", s.Engine)
	}
}

// sweepsDesign says the matrix sweeps the design: sections for several designs are then in order.
func (s *Scenario) sweepsDesign() bool {
	for _, a := range s.Matrix.Axes {
		if a.Key == "design" {
			return true
		}
	}
	return s.variantsSet("design")
}

// decodeOptions decodes the engine's own section (empty when not written, so its defaults are
// filled) with the engine's Decode; errors point at the section's keys.
func (s *Scenario) decodeOptions(e *Engine, errs *Errors) {
	node := s.Sections[e.Options]
	if node == nil {
		node = &yaml.Node{Kind: yaml.MappingNode}
	}
	d := decoder{}
	opts, err := e.Decode(func(into any) error {
		d.decodeInto(node, into, e.Options)
		if len(d.errs) > 0 {
			return d.errs
		}
		return nil
	})
	if len(d.errs) > 0 {
		*errs = append(*errs, d.errs...)
		return
	}
	if err != nil {
		*errs = append(*errs, sectionErrors(e.Options, node, err)...)
		return
	}
	// The engine's own numbers are held to what the scenario's are: finite, durations bounded.
	bad := false
	checkNumbers(reflect.ValueOf(opts), e.Options, func(field, format string, args ...any) {
		bad = true
		*errs = append(*errs, &Error{Field: field, Line: lineOf(node, strings.TrimPrefix(field, e.Options+".")), Msg: fmt.Sprintf(format, args...)})
	})
	if bad {
		return
	}
	if e.Check != nil {
		if err := e.Check(opts, s.plan()); err != nil {
			*errs = append(*errs, sectionErrors(e.Options, node, err)...)
			return
		}
	}
	s.Options, s.optionsKey = opts, e.Options
}

// plan is what an engine's Check and CheckNames see of the scenario.
func (s *Scenario) plan() Plan {
	return Plan{Design: s.Design, Consumers: s.Consumers, Names: s.Names, Consumes: s.Consumes(),
		AnyDesign: s.sweepsDesign() || s.designSwept}
}

// sectionErrors are an engine's errors about its section (key), each at the line of the key it
// names (Field() within the section), or of the section.
func sectionErrors(key string, node *yaml.Node, err error) Errors {
	var out Errors
	for _, one := range flatten(err) {
		field, msg := key, one.Error()
		var fe interface{ Field() string }
		if errors.As(one, &fe) && fe.Field() != "" {
			field += "." + fe.Field()
			msg = strings.TrimPrefix(msg, fe.Field()+": ") // the Error already names the field
		}
		out = append(out, &Error{Field: field, Line: lineOf(node, strings.TrimPrefix(field, key+".")), Msg: msg})
	}
	return out
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
