package kafkaq

import (
	"errors"
	"fmt"
	"regexp"

	"qbench/engines"
)

// The keys of a scenario's names: the topic design takes: an existing topic, and the consumer
// group to read it in.
const (
	NameTopic = "topic"
	NameGroup = "group"
)

// designNames are the names the design takes, the topic first (the registrations' Names).
var designNames = map[string][]string{Design: {NameTopic, NameGroup}}

// legalTopic is what Kafka accepts as a topic name (its Topic.validate): 1 to 249 characters
// from a-z A-Z 0-9 . _ -, and neither "." nor "..".
var legalTopic = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

// nameError is a bad value under names:, naming its key for the scenario's file:line.
type nameError struct{ field, msg string }

func (e nameError) Error() string { return e.field + ": " + e.msg }
func (e nameError) Field() string { return e.field }

// checkNames is the registrations' CheckNames: the topic by Kafka's rule, and a group whenever
// consumers read a named topic (offsets are committed in it).
func checkNames(p engines.Plan) error {
	var errs []error
	topic, group := p.Names[NameTopic], p.Names[NameGroup]
	switch {
	case topic == "":
	case !legalTopic.MatchString(topic):
		errs = append(errs, nameError{NameTopic, fmt.Sprintf("must be 1 to 249 characters from a-z A-Z 0-9 . _ - (got %q)", topic)})
	case topic == "." || topic == "..":
		errs = append(errs, nameError{NameTopic, fmt.Sprintf("must not be %q (Kafka refuses it)", topic)})
	}
	if topic != "" && group == "" && p.Consumes {
		errs = append(errs, nameError{NameGroup, "is required when consumers read a named topic: the consumer group to read in"})
	}
	return errors.Join(errs...)
}

// topicFor is the named topic of an existing system, else the run's own (topicName); groupFor
// likewise for the consumer group. Named ones are never deleted (Teardown).
func topicFor(spec engines.Spec) string {
	if t := spec.Names[NameTopic]; t != "" {
		return t
	}
	return topicName(spec.RunID)
}

func groupFor(spec engines.Spec) string {
	if g := spec.Names[NameGroup]; g != "" {
		return g
	}
	return "qbench-" + spec.RunID
}
