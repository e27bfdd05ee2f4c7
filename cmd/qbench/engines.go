package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"qbench/engines"
)

// enginesWidth is the widest line qbench engines prints: a terminal's 100 columns.
const enginesWidth = 100

func enginesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "engines",
		Short: "List the engines and designs a scenario may name",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeEngines(cmd.OutOrStdout(), engines.All())
		},
	}
}

// writeEngines prints one block per engine: its name and what it is, then the designs, the
// scenario sections it reads and the names: each design takes, each wrapped to enginesWidth.
func writeEngines(w io.Writer, regs []engines.Registration) error {
	indent := 0
	for _, r := range regs {
		indent = max(indent, len(r.Name)+2)
	}
	pad := strings.Repeat(" ", indent)
	for i, r := range regs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		// The scenario sections it reads: its own first, then the shared ones.
		reads := append([]string(nil), r.Sections...)
		if r.Options != "" {
			reads = append([]string{r.Options + ":"}, reads...)
		}
		if len(reads) == 0 {
			reads = []string{"-"}
		}
		lines := wrap(r.Summary, enginesWidth-indent)
		lines = append(lines, wrapLabelled("designs:  ", strings.Join(r.Designs, ", "), enginesWidth-indent)...)
		lines = append(lines, wrapLabelled("sections: ", strings.Join(reads, ", "), enginesWidth-indent)...)
		if names := namesOf(r); names != "" {
			lines = append(lines, wrapLabelled("names:    ", names, enginesWidth-indent)...)
		}
		for j, l := range lines {
			lead := pad
			if j == 0 {
				lead = r.Name + pad[len(r.Name):]
			}
			if _, err := fmt.Fprintln(w, strings.TrimRight(lead+l, " ")); err != nil {
				return err
			}
		}
	}
	return nil
}

// namesOf is what names: each design takes, in the registration's order of designs:
// "stream: stream, group; list: list"; "" for an engine without names.
func namesOf(r engines.Registration) string {
	var parts []string
	for _, d := range r.Designs {
		if keys, ok := r.Names[d]; ok {
			parts = append(parts, d+": "+strings.Join(keys, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// wrapLabelled wraps text after label, continuation lines indented under the text.
func wrapLabelled(label, text string, width int) []string {
	lines := wrap(text, width-len(label))
	for i := range lines {
		if i == 0 {
			lines[i] = label + lines[i]
		} else {
			lines[i] = strings.Repeat(" ", len(label)) + lines[i]
		}
	}
	return lines
}

// wrap breaks text at spaces into lines of at most width (a longer word stands alone).
func wrap(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, word := range strings.Fields(text) {
		if cur.Len() > 0 && cur.Len()+1+len(word) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(word)
	}
	if cur.Len() > 0 || len(lines) == 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
