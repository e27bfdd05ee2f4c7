package scenarios

import (
	"fmt"
	"sort"
	"strings"
)

// FaultKind names a fault a scenario can inject. What each kind needs and does is in one table,
// faultTraits, which validation, the schema and the runner all consult.
type FaultKind string

// The fault kinds, in the order the documentation lists them.
const (
	FaultStall       FaultKind = "stall"
	FaultServerCrash FaultKind = "server-crash"
	FaultPowerLoss   FaultKind = "power-loss"
	FaultDiskFull    FaultKind = "disk-full"
	// FaultIOError: the server's data directory fails with EIO at Point (write or fsync) for
	// Duration: a failing disk, not a full one.
	FaultIOError FaultKind = "io-error"
	// FaultForkFailure: the server cannot fork for Duration, so its background save and log
	// rewrite fail to start (Redis: "Can't save in background: fork: ...").
	FaultForkFailure FaultKind = "fork-failure"
	FaultFailover    FaultKind = "failover"
	FaultCommand     FaultKind = "command"
	// Cluster faults: a Redis Cluster primary (primary-kill, node-restart) or the Kafka broker
	// leading partition 0 (partition-leader-kill, node-restart).
	FaultPrimaryKill         FaultKind = "primary-kill"
	FaultPartitionLeaderKill FaultKind = "partition-leader-kill"
	FaultNodeRestart         FaultKind = "node-restart"
	// FaultPartition cuts a primary off for Duration while clients still reach it: a Redis
	// Cluster primary from the other nodes, a Sentinel-watched one from its replicas and Sentinels.
	FaultPartition FaultKind = "partition"
	// FaultLeaderMove hands the leadership of a shard (a Redis primary) or of partition 0 (Kafka)
	// to an in-sync replica gracefully, through the server's own API: not destructive.
	FaultLeaderMove        FaultKind = "leader-move"
	FaultSlowConsumer      FaultKind = "slow-consumer"
	FaultConsumerCrash     FaultKind = "consumer-crash"
	FaultConsumerPause     FaultKind = "consumer-pause"
	FaultSubscriberOffline FaultKind = "subscriber-offline"
)

// FaultTraits are what a fault kind needs and what it does.
type FaultTraits struct {
	// Destructive faults can destroy messages, not only delay them: a lost or duplicated message
	// is charged to the first destructive window that ended after it was sent. (A consumer crash
	// is destructive only before its work: see Fault.Destructive.)
	Destructive bool
	// NeedsDuration: the fault lasts for Duration, which must be positive.
	NeedsDuration bool
	// NeedsLossyFS: the server's data directory must be on the power-loss file system.
	NeedsLossyFS bool
	// ConsumerSide faults are carried out by the runner's consumer goroutine; the others by the
	// engine (through Staller, Crasher, DiskFiller, FailoverTarget, Commander), so a target must
	// list them in its registration's Faults.
	ConsumerSide bool
	// EndsOnRecovery: the fault's window ends when the server answers again (a restart, a
	// promoted replica), not after Duration.
	EndsOnRecovery bool
	// HitsShard: the fault's shard field picks its target (a Redis Cluster shard's primary).
	HitsShard bool
	// HoldsEngine: carrying the fault out occupies the engine for its duration (and, with
	// EndsOnRecovery, its recovery): the scheduler fires engine-side faults one at a time, so
	// another engine-side fault planned inside it would fire late. Validation refuses that plan
	// (validateFaultOverlap). A command returns at once and holds nothing.
	HoldsEngine bool
	// RestartsDead: a server that exits of the fault on its own (Redis under appendfsync always
	// on an AOF error) is started again RestartAfter after the fault ends, as a supervisor
	// would; without restart_after it stays down.
	RestartsDead bool
}

var faultTraits = map[FaultKind]FaultTraits{
	FaultStall:       {NeedsDuration: true, HoldsEngine: true},
	FaultServerCrash: {Destructive: true, NeedsDuration: true, EndsOnRecovery: true, HoldsEngine: true},
	FaultPowerLoss:   {Destructive: true, NeedsDuration: true, NeedsLossyFS: true, EndsOnRecovery: true, HoldsEngine: true},
	FaultDiskFull:    {NeedsDuration: true, NeedsLossyFS: true, HoldsEngine: true, RestartsDead: true},
	FaultIOError:     {NeedsDuration: true, NeedsLossyFS: true, HoldsEngine: true, RestartsDead: true},
	// Nothing is destroyed: writes are refused (or, without stop-writes-on-bgsave-error, taken
	// with nothing saved) until a save succeeds.
	FaultForkFailure: {NeedsDuration: true, HoldsEngine: true},
	FaultFailover:    {Destructive: true, EndsOnRecovery: true, HoldsEngine: true},
	FaultCommand:     {},
	// A cluster's own failover ends the window: a promoted replica, a new leader, the node back.
	// Their duration is optional (a leader killed with 0 stays down; a node restarted at once).
	FaultPrimaryKill:         {Destructive: true, EndsOnRecovery: true, HitsShard: true, HoldsEngine: true},
	FaultPartitionLeaderKill: {Destructive: true, EndsOnRecovery: true, HoldsEngine: true},
	FaultNodeRestart:         {Destructive: true, EndsOnRecovery: true, HitsShard: true, HoldsEngine: true},
	// A partition ends when it heals (after Duration), not when the cluster has settled again.
	FaultPartition: {Destructive: true, NeedsDuration: true, EndsOnRecovery: true, HitsShard: true, HoldsEngine: true},
	// A graceful move loses nothing by design (the old leader waits for a replica to catch up);
	// its window ends when writes go to the new leader.
	FaultLeaderMove:        {EndsOnRecovery: true, HitsShard: true, HoldsEngine: true},
	FaultSlowConsumer:      {NeedsDuration: true, ConsumerSide: true},
	FaultConsumerCrash:     {ConsumerSide: true},
	FaultConsumerPause:     {NeedsDuration: true, ConsumerSide: true},
	FaultSubscriberOffline: {Destructive: true, NeedsDuration: true, ConsumerSide: true},
}

// FaultKinds lists every kind, in documentation order.
var FaultKinds = []FaultKind{
	FaultStall, FaultServerCrash, FaultPowerLoss, FaultDiskFull, FaultIOError, FaultForkFailure, FaultFailover, FaultCommand,
	FaultPrimaryKill, FaultPartitionLeaderKill, FaultNodeRestart, FaultPartition, FaultLeaderMove,
	FaultSlowConsumer, FaultConsumerCrash, FaultConsumerPause, FaultSubscriberOffline,
}

// Traits returns the kind's traits, and false for a kind that does not exist.
func (k FaultKind) Traits() (FaultTraits, bool) {
	t, ok := faultTraits[k]
	return t, ok
}

// EngineSide reports whether an engine carries the fault out (so a target must list it).
func (k FaultKind) EngineSide() bool {
	t, ok := faultTraits[k]
	return ok && !t.ConsumerSide
}

// shardKindList names the kinds whose shard field picks a target.
func shardKindList() string {
	var names []string
	for _, k := range FaultKinds {
		if faultTraits[k].HitsShard {
			names = append(names, string(k))
		}
	}
	return strings.Join(names, ", ")
}

func faultKindList() string {
	names := make([]string, len(FaultKinds))
	for i, k := range FaultKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Destructive reports whether this fault can destroy messages rather than delay them: its kind's
// trait, and for a consumer crash, a crash before the work (the messages were never processed).
func (f Fault) Destructive() bool {
	if f.Kind == FaultConsumerCrash {
		return f.Point == "before-work"
	}
	t, _ := f.Kind.Traits()
	return t.Destructive
}

// validateFaultOverlap refuses a plan in which an engine-side fault is due while an earlier one
// still holds the engine (HoldsEngine): the scheduler carries engine-side faults out one at a
// time, so the later one would fire late, and the run would not be the one planned. A fault
// that ends on recovery holds the engine past its duration (the restart, the election), so one
// due exactly at its end is refused too. Consumer-side faults fire at once and may overlap.
//
// One pass over the faults sorted by start (an earlier index first at the same start), keeping
// the holder that blocks longest so far: O(n log n) in the number of faults (MaxFaults).
func (s *Scenario) validateFaultOverlap() Errors {
	order := make([]int, len(s.Faults))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return s.Faults[order[x]].At < s.Faults[order[y]].At })
	var errs Errors
	holder := -1 // the fault before this one in order whose hold reaches furthest
	var holdEnd Duration
	var holdRecovers bool
	for _, j := range order {
		b := s.Faults[j]
		if holder >= 0 && b.Kind.EngineSide() && (b.At < holdEnd || (holdRecovers && b.At == holdEnd)) {
			a := s.Faults[holder]
			ta, _ := a.Kind.Traits()
			next := "after " + holdEnd.String()
			if !holdRecovers {
				next = "at " + holdEnd.String() + " or later"
			}
			errs = append(errs, &Error{Field: fmt.Sprintf("faults.%d.at", j), See: fmt.Sprintf("faults.%d", holder),
				Msg: fmt.Sprintf("%s at %s overlaps faults.%d (%s at %s for %s): the engine carries out one server-side fault at a time, so it would fire late; plan it %s%s",
					b.Kind, b.At, holder, a.Kind, a.At, a.Duration, next, recoveryNote(ta))})
		}
		if tb, _ := b.Kind.Traits(); tb.HoldsEngine {
			end := b.At + b.ReplicasBehind + b.Duration
			recovers := tb.EndsOnRecovery
			if tb.RestartsDead && b.RestartAfter > 0 { // it may hold the engine until the restart
				end, recovers = end+b.RestartAfter, true
			}
			if holder < 0 || end > holdEnd || (end == holdEnd && recovers && !holdRecovers) {
				holder, holdEnd, holdRecovers = j, end, recovers
			}
		}
	}
	sort.SliceStable(errs, func(x, y int) bool { return faultIndex(errs[x].Field) < faultIndex(errs[y].Field) })
	return errs
}

// faultIndex is N of a "faults.N.at" field.
func faultIndex(field string) int {
	var n int
	fmt.Sscanf(field, "faults.%d.", &n)
	return n
}

func recoveryNote(t FaultTraits) string {
	if t.EndsOnRecovery {
		return ", leaving time for the recovery"
	}
	return ""
}
