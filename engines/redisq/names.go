package redisq

import (
	"strconv"

	"qbench/engines"
)

// The queue's names: the run's own, under keyPrefix, unless the scenario names an existing
// system's (engines.Spec.Names). A named key is never deleted by the tear-down.

// streamKey is the stream producers XADD to.
func streamKey(spec engines.Spec) string {
	if spec.Names.Stream != "" {
		return spec.Names.Stream
	}
	return keyPrefix(spec) + "stream"
}

// streamGroups are the consumer groups on the stream: g0, g1, ... or the one named. A named
// stream without a named group has none (a producer-only run adds entries and creates no group).
func streamGroups(spec engines.Spec) []string {
	switch {
	case spec.Names.Group != "":
		return []string{spec.Names.Group}
	case spec.Names.Stream != "":
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
	if spec.Names.List != "" {
		return spec.Names.List
	}
	return keyPrefix(spec) + "ready"
}

// channelName is the pub/sub channel; subscribePattern what a pattern subscriber subscribes to.
func channelName(spec engines.Spec) string {
	if spec.Names.Channel != "" {
		return spec.Names.Channel
	}
	return keyPrefix(spec) + "channel"
}

func subscribePattern(spec engines.Spec) string {
	if spec.Names.Channel != "" {
		return spec.Names.Channel
	}
	return keyPrefix(spec) + "chan*"
}

// ownKeys drops the named keys from keys: what the tear-down may delete.
func ownKeys(spec engines.Spec, keys ...string) []string {
	out := keys[:0]
	for _, k := range keys {
		if k != spec.Names.Stream && k != spec.Names.List && k != "" {
			out = append(out, k)
		}
	}
	return out
}
