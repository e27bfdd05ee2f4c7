package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"qbench/bench"
)

// versionCmd is qbench version: qbench's version, the Go toolchain it was built with, the
// build's VCS revision and every dependency's version, as go version -m shows them.
func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print qbench's version, its Go version and its dependencies' versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, _ := debug.ReadBuildInfo()
			writeVersion(cmd.OutOrStdout(), info)
			return nil
		},
	}
}

// writeVersion prints the version report; info may be nil (a binary built without module
// support).
func writeVersion(w io.Writer, info *debug.BuildInfo) {
	fmt.Fprintf(w, "qbench %s\n", bench.Version)
	fmt.Fprintf(w, "go     %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if info == nil {
		return
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified":
			fmt.Fprintf(w, "%-6s %s\n", s.Key[len("vcs."):], s.Value)
		}
	}
	for _, d := range info.Deps {
		v := d.Version
		if d.Replace != nil {
			v += " => " + d.Replace.Path + " " + d.Replace.Version
		}
		fmt.Fprintf(w, "dep    %s %s\n", d.Path, v)
	}
}
