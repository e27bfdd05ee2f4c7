package scenarios

import "regexp"

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

// Names name the keys, group or topic of an existing system, in place of the run-specific names
// qbench derives from the run ID: a team measures its own queue. What a run names it never deletes.
type Names struct {
	Stream  string `yaml:"stream,omitempty" json:"stream,omitempty"`
	Group   string `yaml:"group,omitempty" json:"group,omitempty"`
	List    string `yaml:"list,omitempty" json:"list,omitempty"`
	Topic   string `yaml:"topic,omitempty" json:"topic,omitempty"`
	Channel string `yaml:"channel,omitempty" json:"channel,omitempty"`
}

// Set says a name is given.
func (n Names) Set() bool { return n != Names{} }

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

// namesByDesign is which names each design takes. reliable-list keeps run-private processing
// lists that its tear-down deletes, so it does not run against a named queue.
var namesByDesign = map[string][]string{
	"stream": {"stream", "group"},
	"list":   {"list"},
	"pubsub": {"channel"},
	"topic":  {"topic", "group"},
}

// kafkaTopic is what Kafka accepts as a topic name.
var kafkaTopic = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

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

func (s *Scenario) validateRole(c Checks, bad func(field, format string, args ...any)) {
	switch s.Role {
	case "", RoleBoth, RoleProduce, RoleConsume:
	default:
		bad("role", "must be produce, consume or both (got %q)", s.Role)
		return
	}
	n := s.Names
	given := map[string]string{"stream": n.Stream, "group": n.Group, "list": n.List, "topic": n.Topic, "channel": n.Channel}
	allowed, known := namesByDesign[s.Design]
	for _, k := range []string{"stream", "group", "list", "topic", "channel"} {
		if given[k] == "" {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			if !known {
				bad("names."+k, "design %s does not run against named keys (names are for stream, list, pubsub and topic)", s.Design)
			} else {
				bad("names."+k, "is not a name design %s uses (it takes %v)", s.Design, allowed)
			}
		}
	}
	if n.Topic != "" && !kafkaTopic.MatchString(n.Topic) {
		bad("names.topic", "must be 1 to 249 characters from a-z A-Z 0-9 . _ - (got %q)", n.Topic)
	}
	// An engine that connects to an existing server (its registration's NeedsAddress) is where a
	// half run must name the queue.
	url := false
	if e, err := c.engine(s.Engine); err == nil {
		url = e.NeedsAddress
	}
	if !(s.Produces() && s.Consumes()) && url && known {
		// The queue itself must be named: a run-specific key on a shared system holds nothing
		// for a consumer and would be left behind by a producer.
		if queue := allowed[0]; given[queue] == "" {
			bad("role", "%s on %s needs names.%s: the %s of the existing system to use", s.Role, s.Engine, queue, queue)
		}
	}
	needsGroup := s.Design == "stream" || s.Design == "topic"
	if needsGroup && s.Consumes() && n.Group == "" && (n.Stream != "" || n.Topic != "") {
		bad("names.group", "is required when consumers read a named %s: the consumer group to read in", s.Design)
	}
	if n.Set() && s.Shards > 1 {
		bad("shards", "spreads the queue over keys of the run's own; a named %s is one key (got %d shards)", s.Design, s.Shards)
	}
	if s.Role == RoleConsume && s.PoisonEvery > 0 {
		bad("poison_every", "picks messages by their producer's sequence number; a consume-only run does not choose them")
	}
}
