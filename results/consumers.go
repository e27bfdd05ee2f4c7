package results

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// writeConsumers prints each consumer's share when there are several: a slow consumer's smaller
// share and its latency, or a second group's duplicates, stand out beside the others; pending is
// what it still held unacknowledged at the end.
func writeConsumers(w io.Writer, cs []ConsumerShare, groups int) error {
	if len(cs) < 2 {
		return nil
	}
	fmt.Fprintln(w, "per consumer:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "  consumer\tdeliveries\tduplicates\tpending at end\te2e p50\te2e p99"
	if groups > 1 {
		head = "  consumer\tgroup\tdeliveries\tduplicates\tmissed\tpending at end\te2e p50\te2e p99"
	}
	fmt.Fprintln(tw, head)
	na := false
	for _, c := range cs {
		group, missed := "", ""
		if groups > 1 {
			group = fmt.Sprintf("%d\t", c.Group)
			missed = fmt.Sprintf("%d\t", c.Missed)
		}
		na = na || c.Pending == nil
		fmt.Fprintf(tw, "  %d\t%s%d\t%d\t%s%s\t%s\t%s\n", c.Consumer, group, c.Deliveries, c.Duplicates, missed, FormatPending(c.Pending), FormatNs(c.E2E.P50), FormatNs(c.E2E.P99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if na {
		fmt.Fprintln(w, "  (pending n/a: "+PendingNA+")")
	}
	return nil
}

// PendingNA says why a consumer's pending count is not known.
const PendingNA = "the design keeps no per-consumer record of unacknowledged messages (a list pop or a pub/sub message is gone once read; Kafka commits offsets per partition)"

// FormatPending is a consumer's pending count, or n/a when the design has none.
func FormatPending(p *int64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprint(*p)
}

// writeGroups prints each receiving group's lag when there are several: a group that falls
// behind (slow consumers, an offline subscriber) shows its peak and what it still lacked at the
// end beside the others.
func writeGroups(w io.Writer, gs []GroupLag) error {
	if len(gs) < 2 {
		return nil
	}
	fmt.Fprintln(w, "per group (lag: acked, not yet received by the group; load generator's view):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  group\tconsumers\tdelivered\tlag max\tlag at end")
	for _, g := range gs {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t%d\n", g.Group, g.Consumers, g.Delivered, g.LagMax, g.LagEnd)
	}
	return tw.Flush()
}
