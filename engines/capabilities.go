package engines

import (
	"context"
	"errors"
	"time"
)

// The optional capabilities of an engine, all of them: the runner discovers each by interface
// assertion. An engine type that claims one declares var _ engines.X = (*T)(nil) beside the
// methods, and TestEveryCapabilityIsChecked fails for an interface here that no engine checks.

// Lag is the engine's own view of how far consumers are behind.
type Lag struct {
	// Backlog is messages produced but not yet delivered to any consumer (stream group lag, LLEN of
	// the ready list, log end offset minus committed offset).
	Backlog int64 `json:"backlog"`
	// Pending is messages delivered but not yet acknowledged (stream PEL, processing lists).
	Pending int64 `json:"pending"`
	// OldestPendingNs is the idle time of the oldest pending message, 0 when unknown or none.
	OldestPendingNs int64 `json:"oldest_pending_ns"`
	// Subscribers is how many subscribers the server counts (pub/sub).
	Subscribers int64 `json:"subscribers,omitempty"`
	// Shards is the same reading per shard, when the queue is spread over several keys
	// (Spec.Shards > 1); the fields above are then its sums (Subscribers: its minimum).
	Shards []ShardLag `json:"shards,omitempty"`
}

// ShardLag is one shard's part of a Lag reading, with what the engine counted through it.
type ShardLag struct {
	Backlog     int64 `json:"backlog"`
	Pending     int64 `json:"pending"`
	Subscribers int64 `json:"subscribers,omitempty"`
	// Sent counts messages producers pushed to the shard so far; Received, deliveries consumers
	// read from it.
	Sent     int64 `json:"sent"`
	Received int64 `json:"received"`
}

// Sharder is implemented by engines that spread the queue over several keys and route each
// message by a pure function of its producer and sequence number (the Redis designs under
// Spec.Shards). Messages routed to different shards owe each other no order, so the runner's
// ledger holds the engine to order per shard only.
type Sharder interface {
	Shards() int
	ShardOf(producer int, seq uint64) int
}

// DeliverySharder is implemented by engines whose routing is not a function of a message's
// producer and sequence number (Kafka's balancer picks a partition; a Redis Cluster producer
// picks a shard per batch): their consumers set Delivery.Shard to the shard each message was
// read from, which is the one it was written to, and the runner's ledger holds the engine to
// order among the messages of one shard only. DeliveryShards names the shards ("partition",
// "shard") for the result's reorder scope.
type DeliverySharder interface {
	DeliveryShards() string
}

// SoleReader is implemented by engines that can say whether every shard (partition) of the
// queue is read by one consumer of each receiving group, so that the order a shard keeps
// reaches that consumer even when a group has several: Kafka's group protocol gives each
// partition to one member; a sharded Redis design whose groups have no more consumers than
// shards deals each shard to one. Without it, a group of several competing consumers is owed no
// order (each message goes to whichever consumer asks first).
type SoleReader interface {
	SoleReaders() bool
}

// LagReporter is implemented by engines that can report consumer lag themselves.
type LagReporter interface {
	Lag(ctx context.Context) (Lag, error)
}

// Facts describe the engine for the result file: what ran, which version, which settings.
type Facts struct {
	Name     string            `json:"name"`
	Design   string            `json:"design"`
	Version  string            `json:"version"`
	Address  string            `json:"address,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	// Stats are counters the engine kept or read at the end: dead letters, requeued messages,
	// WAIT results.
	Stats map[string]int64 `json:"stats,omitempty"`
}

// Sweeper is implemented by engines that store messages until they are consumed (a stream, a
// list, a topic). Sweep reads, without consuming, every message the engine still holds for each
// receiving group at the end of a run, and calls found for each, with the group (as Grouper
// numbers them; 0 without groups) and the payload (valid only during the call). The runner calls
// it once, after consumers have stopped and before the result is built: a message acknowledged,
// never delivered and found is a backlog (queued), one not found is gone (lost). Sweep is untimed
// for latency and bounded by ctx. An engine that stores nothing (pub/sub) does not implement it,
// or returns ErrNothingStored, so an undelivered message stays lost. Any other error flags the
// result sweep-failed (lost may count what the engine still holds), so a store the system
// itself says does not exist (a stream a power cut destroyed) is an empty sweep, not an error.
type Sweeper interface {
	Sweep(ctx context.Context, found func(group int, payload []byte)) error
}

// PendingReporter is implemented by engines that keep, per consumer, the messages delivered to
// it and not yet acknowledged (a stream group's PEL, a reliable list's processing lists). The
// runner calls it once, after consumers have stopped: counts[i] is consumer i's (as NewConsumer
// numbered it). ErrNothingStored: the design keeps no such record (list, pub/sub).
type PendingReporter interface {
	PendingByConsumer(ctx context.Context, consumers int) (counts []int64, err error)
}

// DeadLetterReader is implemented by engines that move a message delivered too often to a
// dead-letter store (a stream design's dead-letter stream, a reliable list's dead-letter list).
// DeadLetters reads, without consuming, every message there, calling found with each payload
// (valid only during the call), oldest first; the runner lists their IDs in the result.
// ErrNothingStored: the design has no such store.
type DeadLetterReader interface {
	DeadLetters(ctx context.Context, found func(payload []byte)) error
}

// ErrNothingStored is returned by Sweep from an engine whose design holds no messages (pub/sub
// behind an engine type that also serves designs that do).
var ErrNothingStored = errors.New("the design stores no messages")

// FactReporter is implemented by engines that can describe themselves.
type FactReporter interface {
	Facts(ctx context.Context) Facts
}

// HealthReporter is implemented by engines that can read their server's health counters, so
// that a latency spike shows its cause beside it (a fork, a delayed fsync, evictions). The
// sampler reads them once a second.
type HealthReporter interface {
	Health(ctx context.Context) (Health, error)
}

// Health is one reading of a server's health: counters and gauges (Redis INFO fields such as
// aof_delayed_fsync, evicted_keys, used_memory, maxmemory), statuses (aof_last_write_status:
// ok or err) and the latency events the server recorded (Redis LATENCY LATEST: fork,
// aof-fsync-always ...).
type Health struct {
	Counters map[string]int64
	Status   map[string]string
	Events   []LatencyEvent
}

// LatencyEvent is one line of LATENCY LATEST: the event, when it last happened (unix seconds),
// its latest and its all-time maximum latency in milliseconds.
type LatencyEvent struct {
	Name       string
	LatestUnix int64
	LatestMs   int64
	MaxMs      int64
}

// InProcess is implemented by engines that run inside qbench's own process (the embedded server,
// the null engine): the load generator's CPU figures (getrusage of the process) then include the
// engine's work, and the two compete for the same cores. An engine without it is taken to run
// elsewhere.
type InProcess interface {
	InProcess() bool
}

// Clock is implemented by engines that can tell their server's own time (Redis TIME, the Kafka
// broker's LogAppendTime): a segmented run from several machines estimates each machine's clock
// offset against it by round trips, so that end-to-end latency measured across machines is on one
// clock. PrepareClock is called once before the round trips (Kafka creates its clock topic then,
// outside their timeouts) and describes the clock; EngineTime is one round trip.
type Clock interface {
	PrepareClock(ctx context.Context) (ClockInfo, error)
	EngineTime(ctx context.Context) (time.Time, error)
}

// ClockInfo describes an engine's clock: the name results give it, and its resolution (the step
// of the times EngineTime returns, which truncate), which the estimate's error bound adds.
type ClockInfo struct {
	Source     string
	Resolution time.Duration
}

// Staller is implemented by engines whose server can be made to stop answering for a while
// (DEBUG SLEEP on Redis, the in-repo server's equivalent). Stall returns once the stall has begun.
type Staller interface {
	Stall(ctx context.Context, d time.Duration) error
}

// CrashKind says what a server crash destroys.
type CrashKind string

const (
	// ProcessCrash kills the server process without warning; what the OS had received survives.
	ProcessCrash CrashKind = "process"
	// PowerLoss is a process crash that also discards every byte not yet fsynced.
	PowerLoss CrashKind = "power-loss"
)

// Crasher is implemented by engines that can crash their server and bring it back.
type Crasher interface {
	Crash(ctx context.Context, kind CrashKind) error
	Restart(ctx context.Context) error
}

// FailoverTarget is implemented by engines with replicas: Failover kills the primary without
// warning and promotes a replica, and clients move to it.
type FailoverTarget interface {
	Failover(ctx context.Context) error
}

// FailoverReporter is implemented by FailoverTargets that choose their victim when the fault
// fires (an existing cluster's primary, found through CLUSTER NODES): LastFailover names what the
// last Failover hit, how, and what took its place, for the fault window's target ("" for none).
type FailoverReporter interface {
	LastFailover() string
}

// LeaderMover is implemented by engines that can hand the leadership of the fault's shard (a
// Redis Cluster shard's primary) or of the run's first partition (Kafka) to an in-sync replica
// gracefully, through the server's own API: Redis FAILOVER and CLUSTER FAILOVER, Kafka's
// preferred-leader election. MoveLeader returns once writes go to the new leader. Nothing is
// killed: the old leader goes on as a replica.
type LeaderMover interface {
	MoveLeader(ctx context.Context) (LeaderMove, error)
}

// LeaderMove is what MoveLeader did: the leader before and after, as the engine names its nodes
// ("127.0.0.1:7000", "broker 2").
type LeaderMove struct {
	From, To string
}

// LeaderKiller is implemented by clustered engines that can take down the node leading the run's
// first partition and bring it back: the partition-leader-kill and node-restart faults.
type LeaderKiller interface {
	// KillLeader stops the node leading partition 0, with SIGKILL when crash and a clean
	// shutdown otherwise, and returns once another node leads the partition, or once it is
	// clear none will (no other replica in sync): NewLeader is then 0.
	KillLeader(ctx context.Context, crash bool) (LeaderChange, error)
	// RestartNode starts a node stopped by KillLeader again and returns once it answers.
	RestartNode(ctx context.Context, node int) error
}

// LeaderChange is what KillLeader did: the node it stopped and the partition's leader after.
type LeaderChange struct {
	Node, NewLeader int
}

// Commander is implemented by engines that can send an administrative command to their server
// (BGSAVE, BGREWRITEAOF, CONFIG SET ...), for faults that are a command.
type Commander interface {
	Command(ctx context.Context, args ...string) (string, error)
}

// BackgroundReporter is implemented by engines whose server can say whether work a command
// started in the background (a log rewrite, a snapshot) is still going, so that a command
// fault's window lasts until that work is done instead of being an instant.
type BackgroundReporter interface {
	BackgroundBusy(ctx context.Context) (bool, error)
}

// DiskFiller is implemented by engines whose data directory can be made to refuse writes
// (ENOSPC), as a full disk would.
type DiskFiller interface {
	DiskFull(ctx context.Context, full bool) error
}

// Death is how a server qbench started ended on its own: not killed by a fault, not stopped at
// the end of the run (Redis exiting on an AOF error under appendfsync always).
type Death struct {
	At     time.Time // when qbench saw the process exit
	Status string    // its exit status, as Go reports it ("exit status 1")
	Log    []string  // its last log lines, oldest first
	// Down: it is still down (nothing started it again), so everything after the death is the
	// death's cost.
	Down bool
}

// DeathReporter is implemented by engines that run their server as a child process: Died
// reports whether it exited on its own, and how.
type DeathReporter interface {
	Died() (Death, bool)
}

// IOFailer is implemented by engines whose data directory can be made to fail with EIO, as a
// failing disk would: at point "write" (writes fail) or "fsync" (fsyncs fail); "" turns it off.
type IOFailer interface {
	IOError(ctx context.Context, point string) error
}

// ForkFailer is implemented by engines whose server's background jobs (a snapshot, a log
// rewrite) can be made to fail to start, as they do when fork() fails: on ForkFail(true) until
// ForkFail(false). The server's own rules then decide what follows (Redis: -MISCONF for writes
// under stop-writes-on-bgsave-error yes while save rules are set).
type ForkFailer interface {
	ForkFail(ctx context.Context, fail bool) error
}

// Grouper is implemented by engines whose consumers form several receiving groups, each owed
// every message: pub/sub subscribers, several consumer groups on one stream or topic. Without it,
// all consumers form one group of competing consumers.
type Grouper interface {
	// Groups is the number of receiving groups.
	Groups() int
	// GroupOf is the group of consumer id, 0 to Groups()-1.
	GroupOf(consumer int) int
}

// ShardTargeter is implemented by engines with several shards whose faults can hit any one of
// them (redis-cluster): the runner calls TargetShard with the fault's shard before each fault
// (primary-kill, node-restart, partition: whose primary).
type ShardTargeter interface {
	TargetShard(shard int)
}

// ReplicaHolder is implemented by replicated clusters that can hold the primary's replicas
// behind before killing it (redis-cluster, the managed Kafka cluster): the runner calls
// HoldReplicas with the fault's replicas_behind before each fault (0: none). The next
// primary-kill or partition-leader-kill then stops replication to the victim's replicas, waits
// that long, kills the victim and lets the replicas go on without what they never received.
//
// The scenario's Spec.Faults then lists HoldsReplicas too, so that the engine can prepare (a
// Redis Cluster routes its replication links through proxies it can hold).
type ReplicaHolder interface {
	HoldReplicas(d time.Duration)
}

// HoldsReplicas is the entry of Spec.Faults that says a kill will hold the replicas behind.
const HoldsReplicas = "replicas-behind"

// Partitioner is implemented by clusters that can cut a shard's primary off from the other nodes
// while clients still reach it (redis-cluster; redis-sentinel, from its replicas and Sentinels),
// and heal the cut. Partition names the node cut
// off; Heal returns once the cluster has settled, naming who is primary afterwards.
type Partitioner interface {
	Partition(ctx context.Context) (target string, err error)
	Heal(ctx context.Context) (primary string, err error)
}
