package redisq

import (
	"strconv"

	"qbench/engines"
)

// The queue's names: the run's own, under keyPrefix, unless the scenario names an existing
// system's (engines.Spec.Names). A named key is never deleted by the tear-down.

// The keys of a scenario's names: the Redis designs take (Names, declared by WithSection).
const (
	NameStream  = "stream"
	NameGroup   = "group"
	NameList    = "list"
	NameChannel = "channel"
)

// designNames are the names each design takes, the queue's key first. reliable-list keeps run-private
// processing lists that its tear-down deletes, so it does not run against a named queue.
var designNames = map[string][]string{
	"stream": {NameStream, NameGroup},
	"list":   {NameList},
	"pubsub": {NameChannel},
}

// CheckNames is the registrations' CheckNames. Redis takes any non-empty string as a key, group
// or channel; what it checks is that consumers reading a named stream name the group to read in.
func CheckNames(p engines.Plan) error {
	if p.Design == "stream" && p.Consumes && p.Names[NameStream] != "" && p.Names[NameGroup] == "" {
		return bad(NameGroup, "is required when consumers read a named stream: the consumer group to read in")
	}
	return nil
}

// streamKey is the stream producers XADD to.
func streamKey(spec engines.Spec) string {
	if spec.Names[NameStream] != "" {
		return spec.Names[NameStream]
	}
	return keyPrefix(spec) + "stream"
}

// streamGroups are the consumer groups on the stream: g0, g1, ... or the one named. A named
// stream without a named group has none (a producer-only run adds entries and creates no group).
func streamGroups(spec engines.Spec) []string {
	switch {
	case spec.Names[NameGroup] != "":
		return []string{spec.Names[NameGroup]}
	case spec.Names[NameStream] != "":
		return nil
	}
	var out []string
	for g := 0; g < max(optionsOf(spec).Stream.Groups, 1); g++ {
		out = append(out, "g"+strconv.Itoa(g))
	}
	return out
}

// listKey is the list and reliable-list designs' ready list.
func listKey(spec engines.Spec) string {
	if spec.Names[NameList] != "" {
		return spec.Names[NameList]
	}
	return keyPrefix(spec) + "ready"
}

// channelName is the pub/sub channel; subscribePattern what a pattern subscriber subscribes to.
func channelName(spec engines.Spec) string {
	if spec.Names[NameChannel] != "" {
		return spec.Names[NameChannel]
	}
	return keyPrefix(spec) + "channel"
}

func subscribePattern(spec engines.Spec) string {
	if spec.Names[NameChannel] != "" {
		return spec.Names[NameChannel]
	}
	return keyPrefix(spec) + "chan*"
}

// ownKeys drops the named keys from keys: what the tear-down may delete.
func ownKeys(spec engines.Spec, keys ...string) []string {
	out := keys[:0]
	for _, k := range keys {
		if k != spec.Names[NameStream] && k != spec.Names[NameList] && k != "" {
			out = append(out, k)
		}
	}
	return out
}
