package results

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// writeConsumers prints each consumer's share when there are several: a slow consumer's smaller
// share and its latency, or a second group's duplicates, stand out beside the others.
func writeConsumers(w io.Writer, cs []ConsumerShare, groups int) error {
	if len(cs) < 2 {
		return nil
	}
	fmt.Fprintln(w, "per consumer:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "  consumer\tdeliveries\tduplicates\te2e p50\te2e p99"
	if groups > 1 {
		head = "  consumer\tgroup\tdeliveries\tduplicates\tmissed\te2e p50\te2e p99"
	}
	fmt.Fprintln(tw, head)
	for _, c := range cs {
		group := ""
		if groups > 1 {
			group = fmt.Sprintf("%d\t", c.Group)
		}
		missed := ""
		if groups > 1 {
			missed = fmt.Sprintf("%d\t", c.Missed)
		}
		fmt.Fprintf(tw, "  %d\t%s%d\t%d\t%s%s\t%s\n", c.Consumer, group, c.Deliveries, c.Duplicates, missed, FormatNs(c.E2E.P50), FormatNs(c.E2E.P99))
	}
	return tw.Flush()
}
