// Package results holds the result file: its versioned schema, the HDR histogram encodings, and
// reading and writing. Everything downstream (tables, plots, compare, gates) reads result files.
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// SchemaVersion changes whenever a field changes meaning or is removed.
const SchemaVersion = 1

// Result is one run of one scenario.
type Result struct {
	SchemaVersion int       `json:"schema_version"`
	Tool          string    `json:"tool"`
	RunID         string    `json:"run_id"`
	StartedAt     time.Time `json:"started_at"`
	// Scenario is the scenario as run, defaults filled in.
	Scenario json.RawMessage `json:"scenario"`
	Engine   Engine          `json:"engine"`
	Machine  Machine         `json:"machine"`
	Summary  Summary         `json:"summary"`
	// Series holds one entry per second of the run, warm-up included (flagged).
	Series []Interval `json:"series"`
	// SeriesFile, when set, names the side file holding Series instead (stream.go), relative to
	// the result's directory: ReadFile loads it.
	SeriesFile string `json:"series_file,omitempty"`
	// Checkpoint marks a result written while its run was still going (checkpoint.go).
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// LagSamples is the lag read every 100 ms while a fault is open and for a second after
	// (a one-second reading misses a backlog that builds and drains between two ticks); the
	// per-second Series keeps its own readings. Empty for runs without faults.
	LagSamples []LagSample `json:"lag_samples,omitempty"`
	// Bins is latency over time at a finer grain (100 ms for runs with faults, see BinWidth),
	// binned by completion and by intended send time (bins.go).
	Bins []LatencySeries `json:"latency_bins,omitempty"`
	// Histograms are the whole measured window's histograms, HdrHistogram compressed V2 encoding
	// (base64), keyed by latency kind: produce, send_delay, e2e.
	Histograms map[string]string `json:"histograms"`
	// Errors counts producer and consumer errors by message (the most frequent few).
	Errors []ErrorCount `json:"errors,omitempty"`
	// Lost lists the first lost messages, for investigation.
	Lost []MessageID `json:"lost,omitempty"`
	// DeadLetters lists the messages of this run in the engine's dead-letter store at the end
	// (the first MaxDeadLetters, oldest first): Summary.DeadLettered counts them all.
	DeadLetters []MessageID `json:"dead_letters,omitempty"`
	// Interrupted is true when the run was stopped early (Ctrl-C).
	Interrupted bool `json:"interrupted,omitempty"`
	// Merged says how this result was combined from others (qbench merge); nil for one run.
	Merged *Merged `json:"merged,omitempty"`
	// Faults is what each injected fault cost.
	Faults []FaultWindow `json:"faults,omitempty"`
	// Repetitions holds each repetition's own summary when this result merges repetitions of one
	// scenario; their spread is what the noise-aware gates allow for.
	Repetitions []Repetition `json:"repetitions,omitempty"`
	// Segment marks a partial result: one segment of a run whose load came from several
	// processes (qbench run --segment); qbench merge joins the segments (segments.go).
	Segment *Segment `json:"segment,omitempty"`
	// Segments describes, in a merged run, each segment's share and clock (without its ledger).
	Segments []Segment `json:"segments,omitempty"`
}

// Engine describes the system under test.
type Engine struct {
	Name     string            `json:"name"`
	Design   string            `json:"design"`
	Version  string            `json:"version"`
	Address  string            `json:"address,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	Stats    map[string]int64  `json:"stats,omitempty"`
	// Died is set when the server qbench started exited on its own during the run (not killed
	// by a fault, not stopped at the end): the figures after it describe a dead server.
	Died *EngineDeath `json:"died,omitempty"`
}

// EngineDeath is how the engine's server ended on its own: Redis exiting on an AOF error under
// appendfsync always, say.
type EngineDeath struct {
	// AtNs is when qbench saw the process exit, since the run's epoch.
	AtNs int64 `json:"at_ns"`
	// Status is its exit status ("exit status 1").
	Status string `json:"status"`
	// Log is its last log lines, oldest first: the server's own reason.
	Log []string `json:"log,omitempty"`
}

// Reason is the death's last log line (the server's own words), or "" when none was kept.
func (d *EngineDeath) Reason() string {
	if d == nil || len(d.Log) == 0 {
		return ""
	}
	return d.Log[len(d.Log)-1]
}

// Machine describes where the load generator ran.
type Machine struct {
	CPUs      int    `json:"cpus"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	GoVersion string `json:"go_version"`
	Hostname  string `json:"hostname,omitempty"`
}

// Summary is the measured window (after warm-up) in numbers.
type Summary struct {
	// MeasuredSeconds is the length of the measured window.
	MeasuredSeconds float64 `json:"measured_seconds"`
	// ProduceRate is acknowledged messages per second in the measured window.
	ProduceRate float64 `json:"produce_rate"`
	// ProduceBytesRate is the payload bytes of those messages per second.
	ProduceBytesRate float64 `json:"produce_bytes_rate"`
	// DeliverRate is deliveries made inside the measured window (to every receiving group,
	// duplicates included) divided by the window. DeliverRatePerGroup divides it by Groups.
	DeliverRate         float64 `json:"deliver_rate"`
	DeliverRatePerGroup float64 `json:"deliver_rate_per_group"`
	// DeliverBytesRate is the payload bytes of those deliveries per second: DeliverRate times
	// the mean delivered payload over the run.
	DeliverBytesRate float64 `json:"deliver_bytes_rate"`
	// Groups is the number of receiving groups, each owed every message (pub/sub subscribers,
	// stream consumer groups); 1 for competing consumers.
	Groups int `json:"groups"`
	// DrainSeconds is how long consumers kept reading after the producers stopped; SweepSeconds
	// how long the final, untimed sweep of what the engine still held took.
	DrainSeconds float64 `json:"drain_seconds"`
	SweepSeconds float64 `json:"sweep_seconds"`
	// Generator is the load generator's own cost and limits in this run.
	Generator Generator `json:"generator"`
	// MachineLoad is what else took the machine during the run (steal, other processes' CPU,
	// the load average), machineload.go; nil when not measured.
	MachineLoad *MachineLoad `json:"machine_load,omitempty"`
	// Warnings say, in plain words, when figures describe the generator rather than the engine
	// (or are otherwise not what they seem). Empty when there is nothing to say.
	Warnings []string `json:"warnings,omitempty"`
	// Knee is where a profiled run first broke its knee objective (scenario knee:).
	Knee *Knee `json:"knee,omitempty"`
	// OfferedRate is the scenario's target rate, a profile's mean (0 for a closed loop).
	OfferedRate float64            `json:"offered_rate"`
	Latency     map[string]Latency `json:"latency"`
	// LagMax is the largest lag the load generator saw (acked minus delivered, see
	// scenarios/library/failures/README.md, "What the lag figures count"); EngineLagMax the largest
	// engine-reported backlog plus pending. Both take the per-second series and the sub-second
	// samples taken during faults.
	LagMax        int64  `json:"lag_max"`
	EngineLagMax  int64  `json:"engine_lag_max"`
	Ledger        Ledger `json:"ledger"`
	ProduceErrors int64  `json:"produce_errors"`
	// Unsent counts scheduled messages a producer never sent because it was still behind when
	// the duration plus the drain timeout ran out (a dead or stalled engine).
	Unsent        int64 `json:"unsent,omitempty"`
	ConsumeErrors int64 `json:"consume_errors"`
	// HistogramDropped counts values that could not be recorded (out of range); should be 0.
	HistogramDropped int64 `json:"histogram_dropped"`
	// Role is produce or consume for a run that was only one half (empty: both). Such a run's
	// ledger knows only its half; NotKnown names the ledger fields it could not know, which
	// read 0 but mean "not measured".
	Role     string   `json:"role,omitempty"`
	NotKnown []string `json:"not_known,omitempty"`
	// PerShard is the engine's lag per shard, when the queue was spread over several keys
	// (scenario shards: N; the engine lag above is its sum).
	PerShard []ShardLag `json:"per_shard,omitempty"`
	// PerConsumer is each consumer's (or subscriber's) share, when there are several.
	PerConsumer []ConsumerShare `json:"per_consumer,omitempty"`
	// PerGroup is each receiving group's lag, when there are several groups (stream groups:,
	// pub/sub subscribers); its readings over time are Interval.GroupLag and LagSample.GroupLag.
	PerGroup []GroupLag `json:"per_group,omitempty"`
	// Backlog is the fill and drain of a backlog: scenario's backlog phase.
	Backlog *Backlog `json:"backlog,omitempty"`
	// ReorderScope is the order Ledger.Reordered holds the engine to: "per producer", "per
	// producer and shard" (the engine routes each message to one of several keys) or "per
	// producer and partition" (Kafka). Empty when nothing was judged; ReorderNotPromised then
	// says why (competing consumers of one group), and Reordered reads n/a.
	ReorderScope       string `json:"reorder_scope,omitempty"`
	ReorderNotPromised string `json:"reordered_not_promised,omitempty"`
	// DeadLettered is how many messages the engine held in its dead-letter store at the end (its
	// own count: the stream's dead-letter stream, the reliable list's dead-letter list): messages
	// delivered max_deliveries times, the scenario's poison messages among them.
	DeadLettered int64 `json:"dead_lettered,omitempty"`
}

// ConsumerShare is one consumer's part of the deliveries: the messages of this run it received
// (Deliveries, every one counted), those its group had already received (Duplicates), and the
// end-to-end latency of what it received in the measured window. Group is its receiving group
// (a pub/sub subscriber is a group of its own: its misses are the ledger's lost for it).
type ConsumerShare struct {
	Consumer   int   `json:"consumer"`
	Group      int   `json:"group"`
	Deliveries int64 `json:"deliveries"`
	Duplicates int64 `json:"duplicates"`
	// Missed is, for a consumer alone in its group (a pub/sub subscriber), the acknowledged
	// messages it never received.
	Missed int64   `json:"missed,omitempty"`
	E2E    Latency `json:"e2e"`
	// Pending is how many messages delivered to this consumer were still unacknowledged when the
	// run ended (a stream consumer's entries in its group's PEL, a reliable-list consumer's
	// processing list). Nil when the design keeps no such record per consumer (list, pub/sub,
	// Kafka): the table prints n/a.
	Pending *int64 `json:"pending,omitempty"`
}

// GroupLag is one receiving group's lag as the load generator sees it (acknowledged messages the
// group has not received yet, gone ones included: unlike the run's lag it is not cut after a
// destructive fault): its largest reading and the last, taken when consumers stopped, which is
// the group's queued plus lost. A pub/sub subscriber's lag at the end is what it missed.
type GroupLag struct {
	Group     int   `json:"group"`
	Consumers int   `json:"consumers"`
	Delivered int64 `json:"delivered"`
	LagMax    int64 `json:"lag_max"`
	LagEnd    int64 `json:"lag_end"`
}

// Backlog is what a backlog phase measured: the queue filled with consumers off, then the time
// the consumers took to bring the lag to zero.
type Backlog struct {
	// Producers is keep (they went on at their rate during the drain) or stop.
	Producers string `json:"producers"`
	// FilledMessages is the acknowledged messages intended during the fill; FillSeconds its length
	// (from the start to the consumers' start).
	FilledMessages int64   `json:"filled_messages"`
	FillSeconds    float64 `json:"fill_seconds"`
	// Drained says the lag reached zero before consumers stopped. DrainSeconds is from the
	// consumers' start to then; when not drained, how long consumers ran.
	Drained      bool    `json:"drained"`
	DrainSeconds float64 `json:"drain_seconds"`
	// LagSource is what "zero lag" was read from: engine (its backlog, and every backlog message
	// delivered by the ledger) or ledger (every backlog message delivered).
	LagSource string `json:"lag_source"`
	// DrainRate is messages delivered per second (per receiving group) during the drain, backlog
	// and new ones; NetDrainRate is the backlog over DrainSeconds: how fast it shrank.
	DrainRate    float64 `json:"drain_rate"`
	NetDrainRate float64 `json:"net_drain_rate"`
	// BacklogE2E is the end-to-end latency of the backlog's messages (intended during the fill),
	// DrainE2E that of messages intended after the fill and received before the drain ended.
	BacklogE2E Latency `json:"backlog_e2e"`
	DrainE2E   Latency `json:"drain_e2e"`
}

// Generator is what qbench itself cost while it measured: its CPU (getrusage of the whole
// process, so an engine embedded in the process is included, which InProcessEngine says), its CPU
// per message handled (sent plus delivered), and how often producers hit their in-flight limit.
type Generator struct {
	UserSeconds float64 `json:"user_seconds"`
	SysSeconds  float64 `json:"sys_seconds"`
	// CPUPerMessageNs is (user + sys) over (messages sent + deliveries), in nanoseconds.
	CPUPerMessageNs float64 `json:"cpu_per_message_ns"`
	// CPUShare is (user + sys) over (wall time x CPUs): 1 means every core was busy with qbench.
	CPUShare float64 `json:"cpu_share"`
	// InProcessEngine is true when the engine runs inside qbench's process (embedded, null), so
	// the CPU figures include the engine's own work.
	InProcessEngine bool `json:"in_process_engine,omitempty"`
	// EngineCPUShare is the engine's server process's CPU (from /proc, when qbench started it
	// and knows its PID) over the same wall time x CPUs; 0 when not known (an engine elsewhere,
	// or inside qbench's process, whose cost CPUShare already holds).
	EngineCPUShare float64 `json:"engine_cpu_share,omitempty"`
	// InFlight is the per-producer limit of batches in flight; InFlightFull counts the times a
	// due batch had to wait because the limit was reached (those messages are late, and their
	// send delay says by how much).
	InFlight     int   `json:"in_flight"`
	InFlightFull int64 `json:"in_flight_full"`
	// LateHeldByEngine and LateOwn split the measured messages sent at least WarnSendDelayMinNs
	// late by whose lateness it was: held by the engine (they fell due while every in-flight
	// slot awaited its answer: a stall, a crash, or a rate beyond what it answers at this limit),
	// or the generator's own (its CPU, the machine's timers). The late-producers rule names the
	// larger.
	LateHeldByEngine int64 `json:"late_held_by_engine,omitempty"`
	LateOwn          int64 `json:"late_own,omitempty"`
	// InFlightBound is set for a closed loop (rate: max) whose rate qbench's own in-flight limit
	// set: "rate set by qbench's in-flight limit (N batches of M)". A closed loop's rate is its
	// window (producers x in_flight batches of batch messages) over the engine's latency; this
	// run's window was narrower than the engine's closed-loop shape (the defaults a closed loop
	// gets when the scenario writes neither), so its rate says what that window achieves, not
	// what the engine can take.
	InFlightBound string `json:"in_flight_bound,omitempty"`
	// GCCycles is the number of garbage collections qbench's runtime completed in the run;
	// GCPauseTotalNs and GCPauseMaxNs their stop-the-world pauses in all and the longest (from
	// the runtime's pause histogram: each pause known to its bucket, within ~15%; the longest is its
	// bucket's upper bound); GCPauseShare the total over the run's wall time. GCCPUSeconds is
	// the runtime's estimate of the CPU its collector used (marking, assists, pauses) and
	// GCCPUShare that over the runtime's estimate of all the CPU qbench's Go code used.
	GCCycles       int64   `json:"gc_cycles"`
	GCPauseTotalNs int64   `json:"gc_pause_total_ns"`
	GCPauseMaxNs   int64   `json:"gc_pause_max_ns"`
	GCPauseShare   float64 `json:"gc_pause_share"`
	GCCPUSeconds   float64 `json:"gc_cpu_seconds"`
	GCCPUShare     float64 `json:"gc_cpu_share"`
	// TimerWakeLate is how late the machine's timers woke the producers' pacers: for every
	// precise sleep after the warm-up, when the pacer woke minus when it asked to (it asks for the
	// due time less its lead). PacerSpin is how long each spun after waking, up to the due time;
	// PacerLeadP50Ns and PacerLeadMaxNs how early the pacer asked to be woken (its running
	// estimate of the lateness, at most maxAnticipation and an eighth of the sleep). Lateness
	// beyond the lead is send delay qbench did not choose. CoarseWakeLate is the same lateness
	// for the sleeps at whose end no message is due (a coalescing producer's), which only adds
	// to a batch. Nil when no such sleep was measured.
	TimerWakeLate  *PacerFigure `json:"timer_wake_late,omitempty"`
	PacerSpin      *PacerFigure `json:"pacer_spin,omitempty"`
	PacerLeadP50Ns int64        `json:"pacer_lead_p50_ns,omitempty"`
	PacerLeadMaxNs int64        `json:"pacer_lead_max_ns,omitempty"`
	CoarseWakeLate *PacerFigure `json:"coarse_wake_late,omitempty"`
}

// PacerFigure is a count of the pacer's sleeps and percentiles of one of their times, in ns.
type PacerFigure struct {
	Count int64 `json:"count"`
	P50   int64 `json:"p50_ns"`
	P99   int64 `json:"p99_ns"`
	Max   int64 `json:"max_ns"`
}

// Latency is one latency kind's percentiles, in nanoseconds.
type Latency struct {
	Count int64   `json:"count"`
	Min   int64   `json:"min_ns"`
	Mean  float64 `json:"mean_ns"`
	P50   int64   `json:"p50_ns"`
	P90   int64   `json:"p90_ns"`
	P99   int64   `json:"p99_ns"`
	P999  int64   `json:"p99_9_ns"`
	P9999 int64   `json:"p99_99_ns"`
	Max   int64   `json:"max_ns"`
}

// Ledger is the per-message account of the whole run, warm-up included. PoisonRetries counts
// redeliveries of the scenario's poison messages (poison_every), which consumers never
// acknowledge on purpose: they are not in Duplicates. Reordered counts deliveries that broke an
// order the engine promised, in the scope Summary.ReorderScope names; when nothing was promised
// it is 0 and Summary.ReorderNotPromised says why.
type Ledger struct {
	Sent       int64 `json:"sent"`
	Acked      int64 `json:"acked"`
	Failed     int64 `json:"failed"`
	Delivered  int64 `json:"delivered"`
	Deliveries int64 `json:"deliveries"`
	// Queued counts acknowledged messages not delivered that the engine still held when the run
	// ended (found by the final sweep): a backlog, not a loss. Lost counts those neither
	// delivered nor found: gone. Delivered - DeliveredUnacked + Queued + Lost == Acked for each group
	// (a message delivered although its send failed is in Delivered and DeliveredUnacked).
	Queued             int64 `json:"queued"`
	Lost               int64 `json:"lost"`
	Duplicates         int64 `json:"duplicates"`
	DuplicatedMessages int64 `json:"duplicated_messages"`
	PoisonRetries      int64 `json:"poison_retries,omitempty"`
	DeliveredUnacked   int64 `json:"delivered_unacked"`
	Reordered          int64 `json:"reordered"`
	Phantom            int64 `json:"phantom"`
	Unknown            int64 `json:"unknown"`
	// Foreign counts deliveries that were not this run's messages (no qbench stamp, or another
	// run's), ignored otherwise.
	Foreign int64 `json:"foreign,omitempty"`
}

// Interval is one second of the run.
type Interval struct {
	// StartNs is the interval's start since the run's epoch.
	StartNs int64 `json:"start_ns"`
	// Warmup marks intervals inside the warm-up.
	Warmup bool `json:"warmup,omitempty"`
	// Offered is how many messages the schedule intended in this interval (0 for a closed loop).
	Offered int64 `json:"offered"`
	Acked   int64 `json:"acked"`
	// AckedBytes and DeliveredBytes are the payload bytes acknowledged and delivered in it.
	AckedBytes     int64 `json:"acked_bytes"`
	DeliveredBytes int64 `json:"delivered_bytes"`
	Failed         int64 `json:"failed"`
	Deliveries     int64 `json:"deliveries"`
	// Lag is acked minus first deliveries as the load generator sees it.
	Lag int64 `json:"lag"`
	// EngineLag is the engine's own report, when it has one.
	EngineLag *EngineLag `json:"engine_lag,omitempty"`
	// GroupLag is Lag for each receiving group (index: group), when there are several.
	GroupLag  []int64 `json:"group_lag,omitempty"`
	Produce   Latency `json:"produce"`
	SendDelay Latency `json:"send_delay"`
	E2E       Latency `json:"e2e"`
	// Histograms of this interval (compressed, base64), for interval logs.
	Histograms map[string]string `json:"histograms,omitempty"`
	// Health is the engine's health reading at the end of this interval (Redis INFO counters and
	// statuses, LATENCY LATEST), when the engine reports one.
	Health *EngineHealth `json:"engine_health,omitempty"`
	// WarmupHistograms is the part of Histograms recorded for messages intended during the
	// warm-up, which the summary leaves out (present only when there is such a part). An interval
	// log tags it "warmup", so that its untagged intervals add up to the summary exactly.
	WarmupHistograms map[string]string `json:"warmup_histograms,omitempty"`
	// Machine is what else took the machine in this second (Linux only), as the summary's
	// MachineLoad reckons it over the run.
	Machine *IntervalMachine `json:"machine,omitempty"`
}

// IntervalMachine is one second's steal share and other processes' cores (MachineLoad). A
// second in which the engine's server could not be read (restarted by a fault) counts its CPU
// among the others.
type IntervalMachine struct {
	StealShare float64 `json:"steal_share"`
	OtherCores float64 `json:"other_cores"`
}

// LagSample is one sub-second lag reading, taken at AtNs since the run's epoch: the load
// generator's lag (as Interval.Lag) and the engine's report when it answered.
type LagSample struct {
	AtNs      int64      `json:"at_ns"`
	Lag       int64      `json:"lag"`
	EngineLag *EngineLag `json:"engine_lag,omitempty"`
	GroupLag  []int64    `json:"group_lag,omitempty"`
}

// EngineLag mirrors engines.Lag.
type EngineLag struct {
	Backlog         int64 `json:"backlog"`
	Pending         int64 `json:"pending"`
	OldestPendingNs int64 `json:"oldest_pending_ns"`
	Subscribers     int64 `json:"subscribers,omitempty"`
}

// ErrorCount is how often one error was seen.
type ErrorCount struct {
	Where   string `json:"where"`
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// MaxDeadLetters is how many dead letters a result lists.
const MaxDeadLetters = 1000

// MessageID names one message (and, for a lost message, the receiving group that missed it).
type MessageID struct {
	Group    int    `json:"group,omitempty"`
	Producer int    `json:"producer"`
	Seq      uint64 `json:"seq"`
}

// Write encodes r as indented JSON. A NaN or infinite figure, which JSON cannot hold, is written
// as 0 with a warning naming it (Finite), rather than losing the run.
func Write(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	err := enc.Encode(r) // marshals whole before writing: a failure writes nothing
	var uv *json.UnsupportedValueError
	if errors.As(err, &uv) {
		if fixed := Finite(r); len(fixed) > 0 {
			r.Summary.Warnings = append(r.Summary.Warnings, NonFiniteWarning(fixed))
			return enc.Encode(r)
		}
	}
	return err
}

// WriteFile writes r to path.
func WriteFile(path string, r *Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadFile reads a result and checks its schema version.
func ReadFile(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not a qbench result: %w", path, err)
	}
	if r.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: result schema version %d, this qbench reads %d", path, r.SchemaVersion, SchemaVersion)
	}
	if err := resolveSeries(path, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// FaultWindow is one injected fault and what it cost.
type FaultWindow struct {
	Kind string `json:"kind"`
	// Target names what the fault hit: "server", or "consumer N".
	Target string `json:"target"`
	// StartNs and EndNs are when the fault began and ended, since the run's epoch.
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`
	// Instant marks a fault that was one moment (a command that started no background work):
	// EndNs equals StartNs by design, which is not a fault that never ended.
	Instant bool `json:"instant,omitempty"`
	// Error is set when the fault could not be injected.
	Error string `json:"error,omitempty"`
	// EngineDied: the engine's server exited on its own during this window (Result's
	// Engine.Died says how); nothing after it answered from that process.
	EngineDied bool `json:"engine_died,omitempty"`
	// Marked: qbench did not inject this fault; something else did (a chaos tool, an operator)
	// and marked its start and end while the run was under way (qbench mark). Its times are
	// when the marks arrived, on qbench's clock; its costs are charged by the same rules.
	Marked bool `json:"marked,omitempty"`
	// Segment is, in a run merged from its segments, the segment that fired or marked the
	// fault; its costs are every segment's (segmentfaults.go). Absent otherwise.
	Segment *int `json:"segment,omitempty"`
	// Lost counts acknowledged messages never delivered (nor found queued) charged to this
	// fault: each goes to the first destructive window that ended at or after its intended time,
	// else the first such window (bench/ledger Charge).
	Lost int64 `json:"lost"`
	// Duplicates counts extra deliveries of messages charged to this fault likewise.
	Duplicates int64 `json:"duplicates"`
	// ProduceErrors counts failed sends charged to this fault by the same rule, among the faults
	// that had begun when the send failed.
	ProduceErrors int64 `json:"produce_errors"`
	// RecoverWriteNs and RecoverReadNs are the times from the fault's end to the first write
	// acknowledged and the first message delivered after it; -1 if none came.
	RecoverWriteNs int64 `json:"recover_write_ns"`
	RecoverReadNs  int64 `json:"recover_read_ns"`
	// LagPeak is the largest load generator's lag sampled from the fault's start until a second
	// after its end (its own window: faults may overlap, each sees the whole backlog of its
	// window), from the per-second series and the sub-second samples; EngineLagPeak the largest
	// engine backlog plus pending over the same span.
	LagPeak       int64 `json:"lag_peak"`
	EngineLagPeak int64 `json:"engine_lag_peak,omitempty"`
	// LossWindowNs is the effective loss window of a fault that lost acknowledged messages: how
	// long before the fault began the oldest of them was intended (0 when all were intended
	// during the fault); its size in messages is Lost. LastDurableNs is the last durable point:
	// the intended time (since the epoch) of the newest acknowledged message before the oldest
	// loss that survived; -1 when none did or nothing was lost.
	LossWindowNs  int64 `json:"loss_window_ns,omitempty"`
	LastDurableNs int64 `json:"last_durable_ns,omitempty"`
}
