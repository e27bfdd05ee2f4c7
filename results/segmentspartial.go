package results

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A run from several machines can lose a machine: a pod evicted, a node gone. What the segments
// that finished measured is still a measurement, so qbench merge --allow-missing joins them and
// says plainly what is missing. The rule is "lost means gone": a missing segment's messages are
// not known sent, and a message a missing segment's consumers may have received is not known
// undelivered, so neither is ever counted lost; both are counted apart, as unknown.

// Missing is what a partial merge of segments lacks.
type Missing struct {
	// Segments are the indices of the segments not merged.
	Segments []int `json:"segments"`
	// Producers and Consumers are how many of the scenario's producers and consumers ran only in
	// the missing segments.
	Producers int `json:"producers"`
	Consumers int `json:"consumers"`
	// Scheduled is about how many messages the missing segments' producers were scheduled to
	// send (their share of the offered rate over the scenario's duration; 0 for a closed loop):
	// not known sent, delivered, queued or lost.
	Scheduled int64 `json:"scheduled"`
	// OrphanDelivered counts messages of the missing producers that a present segment's
	// consumers received: neither in the ledger's Sent nor in its Delivered, so that delivered +
	// queued + lost + unresolved add up to acknowledged.
	OrphanDelivered int64 `json:"orphan_delivered"`
	// Unresolved counts acknowledged messages of the present producers that no present segment
	// received and the sweep did not find, while a missing segment ran consumers: it may have
	// received them. Unknown, not lost (summed over groups).
	Unresolved int64 `json:"unresolved"`
}

// PartialLedger is a partial join's outcome (bench.JoinPartialSegmentLedgers).
type PartialLedger struct {
	Ledger          Ledger
	Lost            []MessageID
	Unresolved      int64
	OrphanDelivered int64
}

// PartialLedgerJoin joins the books of the segments present: missingProducers ran only in the
// missing segments; consumersMissing says a missing segment ran consumers.
type PartialLedgerJoin func(books []json.RawMessage, missingProducers []int, consumersMissing bool) (PartialLedger, error)

// MergeSegmentsPartial is MergeSegments for a run some of whose segments are missing: the
// present ones must still be segments of one run (CheckSegments' rules), at least one. With
// none missing it is MergeSegments. The result's Merged.Missing says what is missing, its
// headline says PARTIAL, and its trust verdict is flagged.
func MergeSegmentsPartial(rs []*Result, join LedgerJoin, partial PartialLedgerJoin, cost FaultJoin) (*Result, error) {
	rs, missing, err := checkSegments(rs)
	if err != nil {
		return nil, err
	}
	if len(missing) == 0 {
		return mergeSegments(rs, join, cost)
	}
	producers, consumers := scenarioCounts(rs[0].Scenario)
	ranP := make([]bool, producers)
	ranConsumers, ranProducers := 0, 0
	for _, r := range rs {
		g := r.Segment
		for p := g.Producers.First; p < g.Producers.First+g.Producers.Count && p < producers; p++ {
			ranP[p] = true
		}
		ranProducers += g.Producers.Count
		ranConsumers += g.Consumers.Count
	}
	var missingP []int
	for p, ran := range ranP {
		if !ran {
			missingP = append(missingP, p)
		}
	}
	m := &Missing{Segments: missing, Producers: len(missingP), Consumers: max(0, consumers-ranConsumers)}
	var pl PartialLedger
	out, err := mergeSegments(rs, func(books []json.RawMessage) (Ledger, []MessageID, error) {
		var err error
		pl, err = partial(books, missingP, m.Consumers > 0)
		return pl.Ledger, pl.Lost, err
	}, nil) // a missing segment's costs are unknown: the windows keep the present segments' own
	if err != nil {
		return nil, err
	}
	m.Unresolved, m.OrphanDelivered = pl.Unresolved, pl.OrphanDelivered
	// The present segments' offered rate is their producers' share: the missing share is the
	// same rate per producer.
	if ranProducers > 0 {
		perProducer := out.Summary.OfferedRate / float64(ranProducers)
		m.Scheduled = int64(perProducer*float64(m.Producers)*scenarioDuration(out.Scenario).Seconds() + 0.5)
	}
	// The headline and the trust flag (Assess) carry it to every surface.
	out.Merged.Missing = m
	return out, nil
}

// MissingHeadline is the headline of a merge missing segments; "" for a complete one.
func MissingHeadline(r *Result) string {
	if r.Merged == nil || r.Merged.Missing == nil {
		return ""
	}
	m := r.Merged.Missing
	n := 0
	if len(r.Segments) > 0 {
		n = r.Segments[0].Count
	}
	var b strings.Builder
	fmt.Fprintf(&b, "PARTIAL: segment %s of %d missing: its share is unknown, not lost (%d of the producers", joinInts(m.Segments), n, m.Producers)
	if m.Scheduled > 0 {
		fmt.Fprintf(&b, ", about %s messages scheduled, not known sent", commaInt(m.Scheduled))
	}
	b.WriteString(")")
	if m.Consumers > 0 {
		fmt.Fprintf(&b, "; %d of the consumers missing: %s acknowledged messages no present consumer received are unresolved, not lost",
			m.Consumers, commaInt(m.Unresolved))
	}
	if m.OrphanDelivered > 0 {
		fmt.Fprintf(&b, "; %s deliveries of the missing producers' messages are left out of sent and delivered", commaInt(m.OrphanDelivered))
	}
	return b.String()
}

// scenarioCounts reads a result's scenario producer and consumer counts.
func scenarioCounts(sc json.RawMessage) (producers, consumers int) {
	var v struct {
		Producers int `json:"producers"`
		Consumers int `json:"consumers"`
	}
	_ = json.Unmarshal(sc, &v)
	return v.Producers, v.Consumers
}
