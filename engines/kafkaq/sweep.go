package kafkaq

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
)

// Sweep reports every record the run's consumer group has not yet committed past
// (engines.Sweeper): per partition, from the committed offset (the log start when the group
// committed nothing there, or when retention moved the start past the commit) to the log end
// offset read first, through a reader of its own outside the group, so neither the group's
// offsets nor its membership change. Records are reported for group 0: the engine has one
// consumer group. A record the group would be handed next is held, not lost; one missing from the
// log (a power loss that took unsynced data) is not found.
func (e *engine) Sweep(ctx context.Context, found func(group int, payload []byte)) error {
	ranges, _, err := e.uncommitted(ctx, "sweep")
	if err != nil {
		return err
	}
	for p, r := range ranges {
		if r[0] >= r[1] {
			continue
		}
		if err := e.readRange(ctx, p, r[0], r[1], found); err != nil {
			return fmt.Errorf("%s: sweep partition %d: %w", e.name, p, err)
		}
	}
	return nil
}

// uncommitted is, per partition, the offsets [from, end) the group has not committed past: from
// the committed offset (the log start when nothing was committed there, or when retention moved
// the start past the commit) to the log end. Partitions whose commit could not be read count from
// the log start and are listed in unknown, so that a caller can choose: the sweep reads them
// whole (more is only found, never lost), the lag reports the error rather than overstate it.
// what names the caller in errors.
func (e *engine) uncommitted(ctx context.Context, what string) (ranges map[int][2]int64, unknown []int, err error) {
	parts := make([]int, e.opts.partitions)
	reqs := make([]kafka.OffsetRequest, 0, 2*len(parts))
	for i := range parts {
		parts[i] = i
		reqs = append(reqs, kafka.FirstOffsetOf(i), kafka.LastOffsetOf(i))
	}
	offs, err := e.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{e.topic: reqs}})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: list offsets: %w", e.name, what, err)
	}
	committed, err := e.client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: e.group, Topics: map[string][]int{e.topic: parts}})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: offset fetch: %w", e.name, what, err)
	}
	if committed.Error != nil {
		return nil, nil, fmt.Errorf("%s: %s: offset fetch: %w", e.name, what, committed.Error)
	}
	done := map[int]int64{}
	for _, p := range committed.Topics[e.topic] {
		if p.Error != nil {
			unknown = append(unknown, p.Partition)
			continue
		}
		done[p.Partition] = p.CommittedOffset // -1 when nothing was committed
	}
	ranges = map[int][2]int64{}
	for _, p := range offs.Topics[e.topic] {
		if p.Error != nil {
			return nil, nil, fmt.Errorf("%s: %s: partition %d: %w", e.name, what, p.Partition, p.Error)
		}
		from, ok := done[p.Partition]
		if !ok || from < p.FirstOffset {
			from = p.FirstOffset
		}
		ranges[p.Partition] = [2]int64{from, p.LastOffset}
	}
	return ranges, unknown, nil
}

// readRange reads partition p's records at offsets [from, end) and reports each payload.
func (e *engine) readRange(ctx context.Context, p int, from, end int64, found func(group int, payload []byte)) error {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:   e.bootstrap,
		Topic:     e.topic,
		Partition: p,
		Dialer:    &kafka.Dialer{Timeout: 5 * time.Second, ClientID: "qbench-sweep"},
		MinBytes:  1,
		MaxBytes:  8 << 20,
		MaxWait:   200 * time.Millisecond,
	})
	defer r.Close()
	if err := r.SetOffset(from); err != nil {
		return err
	}
	for {
		m, err := r.ReadMessage(ctx) // no group: nothing is committed
		if err != nil {
			return err
		}
		if m.Offset >= end {
			return nil
		}
		found(0, m.Value)
		if m.Offset >= end-1 {
			return nil
		}
	}
}
