package redisq

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// Designs the Redis engines support; the first is the default.
var designs = []string{"stream", "list", "reliable-list", "pubsub"}

// The scenario sections the Redis targets read (engines.Registration.Sections): every target
// spreads its queue over shards; those that start their server also apply its persistence; only
// the managed redis-server has replicas.
var (
	designSections  = []string{"shards", "shard_routing", "shard_skew"}
	startedSections = append(designSections[:len(designSections):len(designSections)], "persistence", "policy")
	managedSections = append(startedSections[:len(startedSections):len(startedSections)], "replicas")
)

// conformance is what the Redis designs promise the conformance suite, on every target qbench
// runs itself (embedded, server, redis).
var conformance = map[string]engines.Conformance{
	"stream": {Promises: []string{engines.PromiseExactlyOnceInOrder, engines.PromiseCompetingConsumers,
		engines.PromiseRedelivery, engines.PromiseTrimming, engines.PromiseDeadLetter, engines.PromiseWaitForReplicas}},
	"list": {Promises: []string{engines.PromiseExactlyOnceInOrder, engines.PromiseCompetingConsumers,
		engines.PromiseListLosesInFlight, engines.PromiseWaitForReplicas}},
	"reliable-list": {
		Promises: []string{engines.PromiseExactlyOnceInOrder, engines.PromiseCompetingConsumers, engines.PromiseRedelivery},
		// The reaper returns a dead consumer's processing list after the visibility timeout.
		Scenario: map[string]string{engines.PromiseRedelivery: "redis:\n  list:\n    visibility_timeout: 400ms\n"},
	},
	"pubsub": {Promises: []string{engines.PromiseExactlyOnceInOrder, engines.PromiseCompetingConsumers,
		engines.PromiseFanOut, engines.PromiseOfflineSubscriberMisses}},
}

func init() {
	engines.Register(WithSection(engines.Registration{
		Name:    "redis-url",
		Designs: designs,
		Summary: "an existing Redis at address (host:port or redis://[:password@]host:port); keys under a run-specific prefix",
		New:     newURLEngine,
		Faults:  []string{"stall", "command", "leader-move"},
		// The server is someone else's: its persistence is set there, not by the scenario.
		Sections:     designSections,
		NeedsAddress: true,
		Shared:       true,
	}))
}

// newURLEngine connects to an existing Redis: host:port, or a redis:// or rediss:// (TLS) URL
// with an optional password, as go-redis parses it. The password is never logged or written to
// results.
func newURLEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	opts, err := parseAddress(spec.Address)
	if err != nil {
		return nil, err
	}
	u := &urlEngine{}
	var wrap func(dialFunc) dialFunc
	if slices.Contains(spec.Faults, "leader-move") { // connections must follow the move
		u.follow = newFollower(opts.Addr)
		wrap = u.follow.wrap
	}
	e, err := newEngineDialing(ctx, spec, "redis-url", opts, wrap)
	if err != nil {
		return nil, err
	}
	u.engine = e
	if err := e.prepareStall(ctx); err != nil {
		e.Close()
		return nil, err
	}
	if u.follow != nil {
		if err := u.prepareLeaderMove(ctx); err != nil {
			e.Close()
			return nil, err
		}
	}
	return u, nil
}

func parseAddress(s string) (*redis.Options, error) {
	if !strings.Contains(s, "://") {
		return &redis.Options{Addr: s}, nil
	}
	opts, err := redis.ParseURL(s)
	if err != nil {
		// The error must not echo the password back.
		if u, perr := url.Parse(s); perr == nil {
			s = u.Redacted()
		}
		return nil, fmt.Errorf("address %s: %v", s, strings.ReplaceAll(err.Error(), s, "<address>"))
	}
	return opts, nil
}
