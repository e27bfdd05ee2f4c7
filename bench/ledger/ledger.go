// Package ledger accounts for every message of a run, one by one: sent, acknowledged by the
// engine, failed, delivered, delivered more than once, and found still held by the engine when the
// run ended. Loss is computed from these marks at the end, never inferred from counters: an
// acknowledged message a group never received is queued when the engine still held it for that
// group, and lost (gone) only when it did not.
//
// Two ledgers give the same account. Ledger, the reference, keeps every message's marks until the
// run ends (17 bytes, and 4 per receiving group): a segment of a run keeps it, because its Book
// joins the other segments' (Union), and so do a consume-only run and a produce-only one. Compact keeps a message one
// by one only while it is unresolved: per producer a watermark below which messages settled
// plainly (acknowledged, delivered exactly once to every group) are only counted, the exceptions
// below it (failed, duplicated, delivered unacknowledged, spilled while unresolved) in sequence
// order, and a window of marks from the watermark on. Its memory follows the backlog and the
// out-of-order span, not the run's length: with a 500,000-message backlog, 0.1% reordered and
// 0.01% duplicated, 12.9 MB for 10 M messages, 13.6 MB for 100 M, 21.1 MB for 1 G (1.6 times
// the 10 M case; BenchmarkCompactLedger10M, 100M, 1G); with 0.01% lost as well, which it lists
// one by one, 13.5, 14.9 and 27.7 MB (2.1 times; the Lossy cases). A differential test
// (TestCompactMatchesReference) holds it to the reference's totals, lost lists and fault windows
// on simulated runs.
package ledger

import (
	"sync"
	"sync/atomic"
)

const (
	flagSent uint8 = 1 << iota
	flagAcked
	flagFailed
	// flagBatchStart marks the first message of a batch the producer sent as one (Batch also
	// marks the message after a batch's last): the reorder rule owes order within a batch.
	flagBatchStart
)

// maxBatchScan bounds how far the reorder rule looks ahead within one batch for a later
// batch-mate already delivered: batches longer than this are checked on their first
// maxBatchScan followers only, so a pathological batch cannot make each delivery O(batch).
const maxBatchScan = 4096

// Ledger is safe for concurrent use: producers mark their own messages, consumers mark any.
//
// Deliveries are kept per receiving group: every group (a stream consumer group, a pub/sub
// subscriber, a Kafka consumer group) is owed every acknowledged message once. A design with one
// group of competing consumers has one group.
type Ledger struct {
	rules
	producers []*producerBook
	groups    int
	// Live counters, for the drain condition and progress.
	acked          atomic.Int64
	firstDelivered []atomic.Int64 // per group
	// receiveOnly: this run did not send (a consume-only run reading what another run sent), so
	// nothing is known of sends: no lost, queued, phantom or reordered, only deliveries.
	receiveOnly bool
	// timed: a union some of whose books carried intended times; untimed: one of its sending
	// books did not (booktimes.go).
	timed, untimed bool
}

// rules are what both ledgers (Ledger, Compact) are told before the run about how to judge
// deliveries, and the deliveries they count without an account.
type rules struct {
	unknown atomic.Int64
	// foreign counts deliveries that are not this run's messages (no qbench stamp, or another
	// run's): ignored, but counted.
	foreign atomic.Int64
	// shardOf, when the engine routes each message to one of several keys by a pure function
	// (SetShards): the order rule holds among messages of the same shard only. byDelivery, when
	// the deliveries name the shard (a Kafka partition) they were read from instead
	// (SetDeliveryShards): the same, by the shard each delivery names.
	shardOf    func(producer int, seq uint64) int
	byDelivery bool
	// noOrder: the engine promises no order to this run's consumers (SetNoOrder), so none is
	// judged and Reordered stays 0.
	noOrder bool
	// poisonEvery: the consumers deliberately never acknowledge every message whose sequence
	// number is a multiple of it (the scenario's poison_every), so the engine's redeliveries of
	// those are counted as poison retries, not duplicates (SetPoison).
	poisonEvery uint64
}

type producerBook struct {
	mu         sync.Mutex
	flags      []uint8
	deliveries [][]uint32 // [group][seq]
	// intended is each message's intended send time (ns since the run's epoch), for attributing
	// losses to fault windows.
	intended []int64
	// after[seq] is next-seq, where next was the producer's next sequence number to send when
	// seq's acknowledgement came back: every message from next on was sent after seq was
	// acknowledged, so the engine owes delivering seq before it. 0 until the acknowledgement.
	after []uint32
	// highest is the highest sequence number each group has received from this producer, +1;
	// with shards, per group and shard (index shard*groups+group, grown as shards appear).
	highest []uint64
	// shardOf[group][seq] is 1 + the shard a delivery of seq to group named (DeliveredOn), 0
	// before one; only when the ledger judges order by the deliveries' shards.
	shardOf   [][]uint16
	reordered int64
	// found is a bit per sequence number per group: the message was found still held by the
	// engine for that group at the end (Found). Allocated on the first Found.
	found [][]uint64
	// remote: another segment of the run sends this producer's messages (SetRemote); this
	// ledger has no batches or acknowledgements of it to judge order by.
	remote bool
	// failedAt are the failed sends with when they were answered, in a segment of a run with
	// fault windows (FailedAt) and in a union of such segments' books (booktimes.go).
	failedAt []failure
}

// New makes a ledger for n producers and one receiving group.
func New(n int) *Ledger { return NewGroups(n, 1) }

// NewGroups makes a ledger for n producers and groups receiving groups.
func NewGroups(n, groups int) *Ledger {
	groups = max(groups, 1)
	l := &Ledger{producers: make([]*producerBook, n), groups: groups, firstDelivered: make([]atomic.Int64, groups)}
	for i := range l.producers {
		l.producers[i] = &producerBook{deliveries: make([][]uint32, groups), highest: make([]uint64, groups)}
	}
	return l
}

// NewReceiveOnly makes a ledger for a run that only consumes: deliveries of messages another run
// sent, by producer (0 to n-1) and sequence number. Its totals count deliveries and duplicates;
// what was sent, and so what is lost or queued, is the producing run's to know.
func NewReceiveOnly(n, groups int) *Ledger {
	l := NewGroups(n, groups)
	l.receiveOnly = true
	return l
}

// Foreign counts one delivery that is not this run's message (no qbench stamp, or another run's).
func (r *rules) Foreign() { r.foreign.Add(1) }

// SetShards makes the order rule hold per shard: the engine routes message seq of producer to
// shard shardOf(producer, seq) of n, and messages on different shards (different keys) owe each
// other no order. Call it before the run starts.
func (r *rules) SetShards(n int, shardOf func(producer int, seq uint64) int) {
	if n <= 1 || shardOf == nil || r.byDelivery {
		return
	}
	r.shardOf = shardOf
}

// SetDeliveryShards makes the order rule hold per shard as the deliveries name it (DeliveredOn):
// for an engine whose routing is not a function of producer and sequence number (a Kafka
// partition chosen by the client's balancer, a Redis Cluster shard chosen per batch), the shard a
// message was read from is where it was written. It replaces SetShards. Call it before the run.
func (l *Ledger) SetDeliveryShards() {
	l.shardOf, l.byDelivery = nil, true
	for _, b := range l.producers {
		b.shardOf = make([][]uint16, l.groups)
		for g := range b.shardOf {
			b.shardOf[g] = make([]uint16, len(b.flags))
		}
	}
}

// SetNoOrder says the engine promises this run's consumers no order (competing consumers of one
// group, each handed whichever message is next): nothing is judged, Reordered stays 0. Call it
// before the run.
func (r *rules) SetNoOrder() { r.noOrder = true }

// SetPoison says the consumers never acknowledge a message whose sequence number is a multiple
// of every (0: none), on purpose: the engine's redeliveries of it are poison retries, counted
// apart from duplicates. Call it before the run, or before Close.
func (r *rules) SetPoison(every uint64) { r.poisonEvery = every }

// Poison says whether seq is one of the scenario's poison messages (SetPoison).
func (r *rules) Poison(seq uint64) bool { return r.poisonEvery > 0 && seq%r.poisonEvery == 0 }

// maxShard is the highest shard a delivery's mark records (shardOf is uint16, 1 + the shard).
const maxShard = 1<<16 - 2

// slot is the index into b.highest of group and message seq of producer, read from shard (by
// the delivery, or -1), growing highest for a shard not seen before.
func (l *Ledger) slot(b *producerBook, group, producer int, seq uint64, shard int) int {
	return l.slotIn(&b.highest, l.groups, group, producer, seq, shard)
}

// slotIn is slot for either ledger's book: the index into *highest (groups per shard), grown
// for a shard not seen before.
func (r *rules) slotIn(highest *[]uint64, groups, group, producer int, seq uint64, shard int) int {
	k := 0
	switch {
	case r.byDelivery:
		k = min(max(shard, 0), maxShard)
	case r.shardOf != nil:
		k = r.shardOf(producer, seq)
	}
	i := k*groups + group
	if i >= len(*highest) {
		*highest = append(*highest, make([]uint64, i+1-len(*highest))...)
	}
	return i
}

func (b *producerBook) grow(seq uint64) {
	for uint64(len(b.flags)) <= seq {
		n := max(1024, len(b.flags))
		b.flags = append(b.flags, make([]uint8, n)...)
		b.intended = append(b.intended, make([]int64, n)...)
		b.after = append(b.after, make([]uint32, n)...)
		for g := range b.deliveries {
			b.deliveries[g] = append(b.deliveries[g], make([]uint32, n)...)
		}
		for g := range b.shardOf {
			b.shardOf[g] = append(b.shardOf[g], make([]uint16, n)...)
		}
	}
}

// Reserve sizes producer's book for n messages (sequence numbers 0 to n-1, and the entry after
// the last, which Batch marks as the next batch's start) at once, as a run with a schedule knows
// it will send. Growing by doubling instead copied every array of the book under
// its lock, while the producer and the consumers waited on it (at 50,000 msg/s per producer the
// last copy moved some 10 MB), and left the old arrays as garbage for the GC; Reserve's arrays are
// allocated once, before the run starts. A book reserved too small still grows.
func (l *Ledger) Reserve(producer int, n uint64) {
	b := l.producers[producer]
	b.mu.Lock()
	defer b.mu.Unlock()
	have, n := uint64(len(b.flags)), n+1
	if n <= have {
		return
	}
	b.flags = append(b.flags, make([]uint8, n-have)...)
	b.intended = append(b.intended, make([]int64, n-have)...)
	b.after = append(b.after, make([]uint32, n-have)...)
	for g := range b.deliveries {
		b.deliveries[g] = append(b.deliveries[g], make([]uint32, n-have)...)
	}
	for g := range b.shardOf {
		b.shardOf[g] = append(b.shardOf[g], make([]uint16, n-have)...)
	}
}

// Sent marks that a message was handed to the engine; acked says whether the engine
// acknowledged it (false: it returned an error). A message marked with Sent or SentAt is taken
// to have been acknowledged before the producer sent its next one (one batch at a time).
func (l *Ledger) Sent(producer int, seq uint64, acked bool) { l.SentAt(producer, seq, acked, 0) }

// SentAt is Sent for a message intended for intendedNs (since the run's epoch).
func (l *Ledger) SentAt(producer int, seq uint64, acked bool, intendedNs int64) {
	b := l.producers[producer]
	b.mu.Lock()
	b.grow(seq)
	b.mark(seq, acked, intendedNs, seq+1)
	b.mu.Unlock()
	if acked {
		l.acked.Add(1)
	}
}

// Batch records that the producer is about to send messages first..first+n-1 together, as one
// batch (one pipeline, one produce call), while other batches of it may still be in flight. Call
// it before the batch is sent, so that a delivery racing the acknowledgement knows its batch.
func (l *Ledger) Batch(producer int, first uint64, n int) {
	if n <= 0 {
		return
	}
	b := l.producers[producer]
	end := first + uint64(n)
	b.mu.Lock()
	b.grow(end)
	b.flags[first] |= flagBatchStart
	b.flags[end] |= flagBatchStart // the next batch starts there
	b.mu.Unlock()
}

// SentBatch marks a batch recorded with Batch as answered: errs[i] == nil means message first+i
// was acknowledged, intendedNs[i] is its intended send time. next is the producer's next
// sequence number to send when the answer came back (messages from next on were sent after this
// batch was acknowledged; those before it may have been in flight with it).
func (l *Ledger) SentBatch(producer int, first uint64, errs []error, intendedNs []int64, next uint64) {
	if len(errs) == 0 {
		return
	}
	b := l.producers[producer]
	var acked int64
	b.mu.Lock()
	b.grow(first + uint64(len(errs)) - 1)
	for i, err := range errs {
		b.mark(first+uint64(i), err == nil, intendedNs[i], next)
		if err == nil {
			acked++
		}
	}
	b.mu.Unlock()
	l.acked.Add(acked)
}

// mark records one message's answer; b.mu is held and b grown to seq.
func (b *producerBook) mark(seq uint64, acked bool, intendedNs int64, next uint64) {
	b.intended[seq] = intendedNs
	f := flagSent | flagFailed
	if acked {
		f = flagSent | flagAcked
	}
	b.flags[seq] |= f
	// next > seq for every caller; anything else (or an absurd distance) reads as "the next one".
	b.after[seq] = 1
	if next > seq && next-seq <= 1<<32-1 {
		b.after[seq] = uint32(next - seq)
	}
}

// Delivered marks one delivery of a message to a consumer of group 0. It reports whether this
// was the group's first delivery of it.
func (l *Ledger) Delivered(producer int, seq uint64) (first bool) {
	return l.DeliveredTo(0, producer, seq)
}

// DeliveredTo marks one delivery of a message to a consumer of group. A message that names an
// unknown producer, or a group out of range, is counted as unknown.
func (l *Ledger) DeliveredTo(group, producer int, seq uint64) (first bool) {
	return l.DeliveredOn(group, 0, producer, seq)
}

// DeliveredAt is DeliveredOn; the intended time the delivery carries is for Compact, which does
// not keep every message's own.
func (l *Ledger) DeliveredAt(group, shard, producer int, seq uint64, _ int64) (first bool) {
	return l.DeliveredOn(group, shard, producer, seq)
}

// DeliveredOn is DeliveredTo for a delivery read from shard (a Kafka partition, a Redis Cluster
// shard): with SetDeliveryShards the order rule holds among the messages read from the same
// shard; otherwise shard is ignored.
func (l *Ledger) DeliveredOn(group, shard, producer int, seq uint64) (first bool) {
	if producer < 0 || producer >= len(l.producers) || group < 0 || group >= l.groups {
		l.unknown.Add(1)
		return false
	}
	b := l.producers[producer]
	b.mu.Lock()
	b.grow(seq)
	b.deliveries[group][seq]++
	first = b.deliveries[group][seq] == 1
	if first && !l.noOrder && !b.remote && !l.receiveOnly {
		slot := l.slot(b, group, producer, seq, shard)
		if l.byDelivery {
			b.shardOf[group][seq] = uint16(min(max(shard, 0), maxShard) + 1)
		}
		if seq+1 < b.highest[slot] && b.brokeOrder(group, slot, seq, l.sameShard(b, group, producer, seq)) {
			b.reordered++
		}
		b.highest[slot] = max(b.highest[slot], seq+1)
	}
	b.mu.Unlock()
	if first {
		l.firstDelivered[group].Add(1)
	}
	return first
}

// Found marks that the engine still held a message for group when the run ended (the final
// sweep): if the group never received it, it is queued, not lost. A mark for a group or producer
// out of range, or for a sequence number never sent, is ignored: only acknowledged messages are
// classified. Marking twice is the same as once. Call it after consumers have stopped.
func (l *Ledger) Found(group, producer int, seq uint64) {
	if producer < 0 || producer >= len(l.producers) || group < 0 || group >= l.groups {
		return
	}
	b := l.producers[producer]
	b.mu.Lock()
	defer b.mu.Unlock()
	if seq >= uint64(len(b.flags)) {
		if !b.remote {
			return
		}
		b.grow(seq) // sent by another segment: the union classifies it
	}
	if b.found == nil {
		b.found = make([][]uint64, l.groups)
	}
	words := (len(b.flags) + 63) / 64
	if len(b.found[group]) < words {
		b.found[group] = append(b.found[group], make([]uint64, words-len(b.found[group]))...)
	}
	b.found[group][seq/64] |= 1 << (seq % 64)
}

// isFound reports whether seq was found for group. The caller holds b.mu.
func (b *producerBook) isFound(group int, seq int) bool {
	if b.found == nil || seq/64 >= len(b.found[group]) {
		return false
	}
	return b.found[group][seq/64]&(1<<(seq%64)) != 0
}

// sameShard says whether message s of producer is on seq's shard (always, without shards): by
// the routing function, or by the shard the delivery of s to group named. b.mu is held.
func (l *Ledger) sameShard(b *producerBook, group, producer int, seq uint64) func(s uint64) bool {
	switch {
	case l.byDelivery:
		marks := b.shardOf[group]
		k := marks[seq]
		return func(s uint64) bool { return marks[s] == k }
	case l.shardOf != nil:
		k := l.shardOf(producer, seq)
		return func(s uint64) bool { return l.shardOf(producer, s) == k }
	}
	return nil
}

// brokeOrder reports whether the first delivery of seq to group, now, breaks an order the engine
// owed: a message of the same producer (and shard) already reached the group although it was sent
// after seq was acknowledged, or it is a later message of seq's own batch on the same shard (a
// pipeline or a produce call keeps its order in the designs that keep order at all). A later
// message that was in flight together with seq, in another batch, may arrive first through no
// fault of the engine, and so may one on another shard (another key). A delivery that comes
// before the runner has recorded seq's acknowledgement is judged by its batch alone (a message
// sent after that acknowledgement arriving first is then a microseconds-wide race, and is not
// counted). slot indexes highest for seq's group and shard; same is nil without shards. b.mu is
// held.
func (b *producerBook) brokeOrder(group, slot int, seq uint64, same func(s uint64) bool) bool {
	hi := b.highest[slot] // one past the highest sequence number of seq's shard delivered to group
	if a := b.after[seq]; a != 0 && hi > seq+uint64(a) {
		return true
	}
	d := b.deliveries[group]
	for s := seq + 1; s < hi && s <= seq+maxBatchScan; s++ {
		if b.flags[s]&flagBatchStart != 0 {
			return false // the end of seq's batch
		}
		if d[s] > 0 && (same == nil || same(s)) {
			return true
		}
	}
	return false
}

// Acked is the number of messages acknowledged so far.
func (l *Ledger) Acked() int64 { return l.acked.Load() }

// DeliveredUnique is the number of distinct messages delivered so far to the group that has
// received the fewest: the run has drained when it reaches Acked.
func (l *Ledger) DeliveredUnique() int64 {
	least := l.firstDelivered[0].Load()
	for g := 1; g < l.groups; g++ {
		least = min(least, l.firstDelivered[g].Load())
	}
	return least
}

// Totals is the ledger's final account.
type Totals struct {
	Sent   int64 `json:"sent"`
	Acked  int64 `json:"acked"`
	Failed int64 `json:"failed"`
	// Delivered counts distinct messages delivered at least once (summed over groups).
	Delivered int64 `json:"delivered"`
	// Deliveries counts every delivery, duplicates included.
	Deliveries int64 `json:"deliveries"`
	// Queued counts acknowledged messages never delivered that the engine still held at the end
	// (a backlog; summed over groups). Lost counts those neither delivered nor held: gone.
	Queued int64 `json:"queued"`
	// Lost counts messages acknowledged to the producer, never delivered (to a group; summed
	// over groups) and not found in the engine at the end.
	Lost int64 `json:"lost"`
	// Duplicates counts deliveries beyond the first.
	Duplicates int64 `json:"duplicates"`
	// DuplicatedMessages counts distinct messages delivered more than once.
	DuplicatedMessages int64 `json:"duplicated_messages"`
	// PoisonRetries counts deliveries beyond the first of the scenario's poison messages (see
	// SetPoison): redeliveries the run asked for by never acknowledging them, kept out of
	// Duplicates and DuplicatedMessages.
	PoisonRetries int64 `json:"poison_retries,omitempty"`
	// DeliveredUnacked counts messages delivered although the producer saw an error for them (or
	// never learned the outcome): a write the engine kept despite failing it.
	DeliveredUnacked int64 `json:"delivered_unacked"`
	// Reordered counts first deliveries that arrived after a later message of the same producer
	// (and shard, with SetShards or SetDeliveryShards) had already reached the same group, where
	// the engine owed the order: the later message was sent after this one was acknowledged, or
	// in the same batch (see Batch and SentBatch). Always 0 with SetNoOrder.
	Reordered int64 `json:"reordered"`
	// Phantom counts deliveries of sequence numbers that were never sent.
	Phantom int64 `json:"phantom"`
	// Unknown counts deliveries naming a producer this run did not have.
	Unknown int64 `json:"unknown"`
	// Foreign counts deliveries that were not this run's messages: no qbench stamp, or another
	// run's. They are ignored otherwise.
	Foreign int64 `json:"foreign"`
}

// LostMessage names one lost message.
type LostMessage struct {
	Group    int    `json:"group,omitempty"`
	Producer int    `json:"producer"`
	Seq      uint64 `json:"seq"`
}

// Close computes the totals and returns up to maxLost of the lost messages, lowest first. For
// every group, each acknowledged message is delivered, queued or lost, exactly one of them.
func (l *Ledger) Close(maxLost int) (Totals, []LostMessage) {
	var t Totals
	var lost []LostMessage
	for p, b := range l.producers {
		b.mu.Lock()
		for seq, f := range b.flags {
			if f&flagSent != 0 {
				t.Sent++
			}
			if f&flagAcked != 0 {
				t.Acked++
			}
			if f&flagFailed != 0 {
				t.Failed++
			}
			for g := range b.deliveries {
				if account(&t, f, int64(b.deliveries[g][seq]), b.isFound(g, seq), l.Poison(uint64(seq)), l.receiveOnly) && len(lost) < maxLost {
					lost = append(lost, LostMessage{Group: g, Producer: p, Seq: uint64(seq)})
				}
			}
		}
		t.Reordered += b.reordered
		b.mu.Unlock()
	}
	t.Unknown = l.unknown.Load()
	t.Foreign = l.foreign.Load()
	return t, lost
}

// account adds one message's deliveries to one group into t, and reports whether it was lost:
// acknowledged, never delivered to the group and not found held for it. The extra deliveries of
// a poison message are poison retries, not duplicates. receiveOnly: the sends are another run's.
func account(t *Totals, f uint8, d int64, found, poison, receiveOnly bool) (lost bool) {
	if d > 0 {
		t.Delivered++
		t.Deliveries += d
		switch {
		case receiveOnly: // sends are another run's: nothing to check them against
		case f&flagSent == 0:
			t.Phantom += d
		case f&flagAcked == 0:
			t.DeliveredUnacked++
		}
	}
	switch {
	case d > 1 && poison:
		t.PoisonRetries += d - 1
	case d > 1:
		t.Duplicates += d - 1
		t.DuplicatedMessages++
	}
	if f&flagAcked != 0 && d == 0 {
		if found {
			t.Queued++
			return false
		}
		t.Lost++
		return true
	}
	return false
}

// Window is a fault's time span, in ns since the run's epoch.
type Window struct {
	StartNs, EndNs int64
	// Destructive faults (a crash, a subscriber offline) can destroy messages; others (a pause,
	// a stall) only delay them.
	Destructive bool
}

// WindowTotals is what one fault window cost.
type WindowTotals struct {
	// Lost counts acknowledged messages never delivered (to a group) and not found queued at the
	// end that the window could have destroyed: those intended before the window ended and after
	// the previous window ended.
	Lost int64 `json:"lost"`
	// Duplicates counts extra deliveries of the same messages.
	Duplicates int64 `json:"duplicates"`
	// OldestLostNs is the intended time of the oldest lost message charged to the window, and
	// LastDurableNs that of the newest acknowledged message intended before it that was not lost
	// (the last durable point); both -1 when there is none.
	OldestLostNs, LastDurableNs int64
}

// Attribute charges every lost or duplicated message to a window that ended at or after the
// message's intended send time (a message sent during a fault, or before it and still
// undelivered when it struck): the first destructive such window, else the first such window
// (windows sorted by start). Messages after the last window are charged to none. Call it after
// the run, like Close.
func (l *Ledger) Attribute(windows []Window) []WindowTotals {
	out := make([]WindowTotals, len(windows))
	if len(windows) == 0 {
		return out
	}
	for i := range out {
		out[i].OldestLostNs, out[i].LastDurableNs = -1, -1
	}
	for _, b := range l.producers {
		b.mu.Lock()
		for seq, f := range b.flags {
			lost, dups := b.cost(seq, f, l.Poison(uint64(seq)))
			if lost == 0 && dups == 0 {
				continue
			}
			if i := Charge(windows, b.intended[seq]); i >= 0 {
				out[i].Lost += lost
				out[i].Duplicates += dups
				if lost > 0 && (out[i].OldestLostNs < 0 || b.intended[seq] < out[i].OldestLostNs) {
					out[i].OldestLostNs = b.intended[seq]
				}
			}
		}
		b.mu.Unlock()
	}
	// The last durable point: the newest acknowledged, not lost message before the oldest loss.
	for _, b := range l.producers {
		b.mu.Lock()
		for seq, f := range b.flags {
			if f&flagAcked == 0 {
				continue
			}
			if lost, _ := b.cost(seq, f, false); lost > 0 {
				continue
			}
			t := b.intended[seq]
			for i := range out {
				if out[i].OldestLostNs >= 0 && t < out[i].OldestLostNs && t > out[i].LastDurableNs {
					out[i].LastDurableNs = t
				}
			}
		}
		b.mu.Unlock()
	}
	return out
}

// cost is one message's lost count (groups it never reached, acknowledged and not found queued)
// and extra deliveries (none for a poison message: its retries are the run's own). b.mu is held.
func (b *producerBook) cost(seq int, f uint8, poison bool) (lost, dups int64) {
	for g := range b.deliveries {
		d := int64(b.deliveries[g][seq])
		// A message still queued was not destroyed by any fault: only the lost count.
		if f&flagAcked != 0 && d == 0 && !b.isFound(g, seq) {
			lost++
		}
		if d > 1 && !poison {
			dups += d - 1
		}
	}
	return lost, dups
}

// Charge is the one rule that says which window a message's cost goes to (Attribute's, for loss
// and duplicates; the runner's, for a failed send): the first destructive window that ended at
// or after its intended time, else the first such window; -1 for none.
func Charge(windows []Window, intendedNs int64) int {
	first := -1
	for i, w := range windows {
		if intendedNs > w.EndNs {
			continue
		}
		if w.Destructive {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	return first
}
