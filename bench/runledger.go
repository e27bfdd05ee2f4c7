package bench

import (
	"qbench/bench/ledger"
	"qbench/scenarios"
)

// runLedger is what the runner asks of its ledger. A run keeps the compact ledger
// (ledger.Compact: memory for what is unresolved, not for what was sent); a segment of a run
// keeps the reference ledger (ledger.Ledger), whose book the segments' union joins, and so does a
// consume-only run, which knows deliveries and not sends, and a produce-only run, whose messages
// all stay unresolved (the reference keeps them in fewer bytes; scenarios' validateMemory bounds
// it so).
type runLedger interface {
	Foreign()
	DeliveredAt(group, shard, producer int, seq uint64, intendedNs int64) bool
	DeliveredOn(group, shard, producer int, seq uint64) bool
	Poison(seq uint64) bool
	SetPoison(every uint64)
	SetShards(n int, shardOf func(producer int, seq uint64) int)
	SetDeliveryShards()
	SetNoOrder()
	Reserve(producer int, n uint64)
	Batch(producer int, first uint64, n int)
	SentBatch(producer int, first uint64, errs []error, intendedNs []int64, next uint64)
	Found(group, producer int, seq uint64)
	Acked() int64
	DeliveredUnique() int64
	Received() int64
	Close(maxLost int) (ledger.Totals, []ledger.LostMessage)
	Attribute(windows []ledger.Window) []ledger.WindowTotals
}

var (
	_ runLedger = (*ledger.Ledger)(nil)
	_ runLedger = (*ledger.Compact)(nil)
)

// newRunLedger makes the ledger for a run of sc with groups receiving groups.
func newRunLedger(sc *scenarios.Scenario, opts Options, groups int) runLedger {
	switch {
	case !sc.Produces():
		return ledger.NewReceiveOnly(sc.Producers, groups)
	case opts.Segment != nil, !sc.Consumes():
		return ledger.NewGroups(sc.Producers, groups)
	}
	return ledger.NewCompact(sc.Producers, groups)
}

// reference is the run's reference ledger: a segment's (see newRunLedger).
func (r *run) reference() *ledger.Ledger {
	l, _ := r.ledger.(*ledger.Ledger)
	return l
}
