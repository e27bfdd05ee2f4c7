package scenarios

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// Backlog fills the queue with consumers off before the measured phase, then starts them and
// measures the drain (see bench/backlog.go). One of Messages and Duration is set.
type Backlog struct {
	// Messages fills until this many messages (over all producers, at the scenario's rate) have
	// been offered.
	Messages int64 `yaml:"messages,omitempty" json:"messages,omitempty"`
	// Duration fills for this long.
	Duration Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Producers is keep (the default: producers go on at their rate during the drain, for the
	// scenario's duration) or stop (they stop when the fill ends; consumers drain what is there).
	Producers string `yaml:"producers,omitempty" json:"producers,omitempty"`
}

// Set says the scenario has a backlog phase.
func (b Backlog) Set() bool { return b.Messages != 0 || b.Duration != 0 || b.Producers != "" }

// Names name the objects of an existing system (a stream and its group, a topic, a queue) in
// place of the run-specific names qbench derives from the run ID: a team measures its own queue.
// The keys are the engine's (its registration declares which each design takes, and checks the
// values); what a run names it never deletes.
type Names map[string]string

// Set says a name is given.
func (n Names) Set() bool { return len(n) > 0 }

// Roles a run may take: both produces and consumes (the default); produce only sends, consume
// only reads what another run (or system) put there.
const (
	RoleBoth    = "both"
	RoleProduce = "produce"
	RoleConsume = "consume"
)

// Produces and Consumes say which halves of the run exist. An empty role is both (left empty so
// that scenarios without one are written as before).
func (s *Scenario) Produces() bool { return s.Role != RoleConsume }
func (s *Scenario) Consumes() bool { return s.Role != RoleProduce }

func (s *Scenario) validateBacklog(bad func(field, format string, args ...any)) {
	b := s.Backlog
	if !b.Set() {
		return
	}
	switch {
	case b.Messages != 0 && b.Duration != 0:
		bad("backlog", "takes one of messages or duration, not both")
	case b.Messages == 0 && b.Duration == 0:
		bad("backlog", "needs messages: N or duration: 30s (how much to fill before consumers start)")
	}
	if b.Messages < 0 || b.Messages > MaxBacklogMessages {
		bad("backlog.messages", "must be between 1 and %d in one process (got %d)", MaxBacklogMessages, b.Messages)
	}
	if b.Duration < 0 || b.Duration > Duration(MaxDuration) {
		bad("backlog.duration", "must be positive and at most %s (got %s)", MaxDuration, b.Duration)
	}
	if b.Duration > 0 && s.Duration > 0 && b.Duration+s.Duration > Duration(MaxDuration) {
		bad("backlog.duration", "the fill and the duration together must be at most %s (got %s + %s)", MaxDuration, b.Duration, s.Duration)
	}
	switch b.Producers {
	case "keep", "stop":
	default:
		bad("backlog.producers", "must be keep or stop (got %q)", b.Producers)
	}
	if b.Messages > 0 && s.Rate.Max {
		bad("backlog.messages", "needs a rate to fill at; a closed loop (rate: max) fills by backlog.duration")
	}
	if s.Profile.Set() {
		bad("backlog", "fills at a constant rate; it does not combine with profile:")
	}
	if s.Design == "pubsub" {
		bad("backlog", "pub/sub stores nothing: what is published while no subscriber listens is dropped, so there is no backlog to drain")
	}
	if !(s.Produces() && s.Consumes()) {
		bad("backlog", "needs producers and consumers in one run (role is %s)", s.Role)
	}
}

func (s *Scenario) validateRole(c Checks, bad func(field, format string, args ...any), errs *Errors) {
	switch s.Role {
	case "", RoleBoth, RoleProduce, RoleConsume:
	default:
		bad("role", "must be produce, consume or both (got %q)", s.Role)
		return
	}
	if s.Names.Set() && s.Shards > 1 {
		bad("shards", "spreads the queue over keys of the run's own; a named %s is one key (got %d shards)", s.Design, s.Shards)
	}
	if s.Role == RoleConsume && s.PoisonEvery > 0 {
		bad("poison_every", "picks messages by their producer's sequence number; a consume-only run does not choose them")
	}
	keys := slices.Sorted(maps.Keys(s.Names))
	for _, k := range keys {
		if s.Names[k] == "" {
			bad("names."+k, "is empty: name the existing system's %s, or leave the key out for the run's own", k)
		}
	}
	// Which names a design takes is the engine's: with the engine unknown or swept, each cell
	// checks its own.
	e, err := c.engine(s.Engine)
	if err != nil || s.sweepsEngine() {
		return
	}
	s.validateNames(c, e, keys, bad, errs)
}

// validateNames checks names: against the engine's registration: the keys its design takes, the
// queue a half run on an existing system must name, and the values by the engine's own rules.
func (s *Scenario) validateNames(c Checks, e *Engine, keys []string, bad func(field, format string, args ...any), errs *Errors) {
	takes, named := e.Names[s.Design]
	var wrong bool
	for _, k := range keys {
		switch {
		case slices.Contains(takes, k):
			continue
		case len(e.Names) == 0:
			can := c.names(func(o *Engine) bool { return len(o.Names) > 0 })
			bad("names."+k, "engine %s does not run against named objects (engines that do: %s)", s.Engine, strings.Join(can, ", "))
		case !named:
			bad("names."+k, "design %s does not run against named keys (names are for designs %s)", s.Design, strings.Join(e.namedDesigns(), ", "))
		default:
			bad("names."+k, "is not a name design %s uses (it takes %v)", s.Design, takes)
		}
		wrong = true
	}
	// An engine that connects to an existing server (its registration's NeedsAddress) is where a
	// half run must name the queue: a run-specific one on a shared system holds nothing for a
	// consumer and would be left behind by a producer.
	if !(s.Produces() && s.Consumes()) && e.NeedsAddress && named {
		if queue := takes[0]; s.Names[queue] == "" {
			bad("role", "%s on %s needs names.%s: the %s of the existing system to use", s.Role, s.Engine, queue, queue)
		}
	}
	if wrong || !s.Names.Set() || e.CheckNames == nil {
		return
	}
	if err := e.CheckNames(s.plan()); err != nil {
		for _, one := range flatten(err) {
			field, msg := "names", one.Error()
			var fe interface{ Field() string }
			if errors.As(one, &fe) && fe.Field() != "" {
				field += "." + fe.Field()
				msg = strings.TrimPrefix(msg, fe.Field()+": ") // the Error already names the field
			}
			*errs = append(*errs, &Error{Field: field, Msg: msg})
		}
	}
}

// namedDesigns are the engine's designs that take names, in its order.
func (e *Engine) namedDesigns() []string {
	var out []string
	for _, d := range e.Designs {
		if _, ok := e.Names[d]; ok {
			out = append(out, d)
		}
	}
	return out
}
