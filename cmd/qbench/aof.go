package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"qbench/engines/server/aof"
	"qbench/engines/server/fsys"
)

// errDamaged makes `aof check` exit 1 when a log is damaged (the report is on stdout).
var errDamaged = errors.New("the append-only file is damaged (see above); `qbench aof fix` truncates it at the last valid record")

func aofCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "aof",
		Short: "Check or repair the in-repo server's append-only files (DIR is the server's --dir or its appendonlydir)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check DIR",
		Short: "Report every file of the log and where it is damaged",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			l, err := openLayout(args[0])
			orphaned := false
			if err != nil {
				// No manifest: check the log files found, if any, and suggest one.
				if l, orphaned = orphanLayout(args[0]); !orphaned {
					return err
				}
			}
			var reps []aof.FileReport
			if orphaned {
				reps, err = aof.CheckFiles(l)
			} else {
				reps, err = aof.Check(l)
			}
			if err != nil {
				return err
			}
			damaged := false
			for _, r := range reps {
				if r.Damage == nil && r.ZeroBytes > 0 {
					fmt.Fprintf(out, "%s: ok, %d records, %d bytes, then %d zero bytes (preallocated space, or blocks a crash left unwritten: no record; the server trims them)\n", r.File, r.Records, r.ValidEnd, r.ZeroBytes)
					continue
				}
				if r.Damage == nil {
					fmt.Fprintf(out, "%s: ok, %d records, %d bytes\n", r.File, r.Records, r.Size)
					continue
				}
				damaged = true
				kind := "corrupt"
				if r.Damage.Truncated {
					kind = "truncated"
				}
				fmt.Fprintf(out, "%s: %s at byte offset %d (%s); %d valid records before it, %d bytes after it, %d valid-looking records after it\n",
					r.File, kind, r.Damage.Offset, r.Damage.Reason, r.Records, r.Size-r.ValidEnd, r.Recoverable)
			}
			if orphaned {
				fmt.Fprintf(out, "no manifest: the server refuses to start on these files. A manifest naming the base of the highest sequence and the incremental files from it on would be (check it, then write it to %s):\n%s", l.ManifestPath(), l.Manifest())
				return errNoManifest
			}
			if damaged {
				return errDamaged
			}
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "fix DIR",
		Short: "Back up the first damaged file and truncate it at its last valid record (later files are dropped from the manifest)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := openLayout(args[0])
			if err != nil {
				return err
			}
			fr, err := aof.Fix(l)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if fr == nil {
				fmt.Fprintln(out, "nothing to fix: every file is valid")
				return nil
			}
			fmt.Fprintf(out, "%s: truncated at byte offset %d; %d bytes and %d records discarded\n", fr.File, fr.Offset, fr.DiscardedBytes, fr.DiscardedRecords)
			for _, f := range fr.DroppedLaterFiles {
				fmt.Fprintf(out, "%s: dropped from the manifest (it followed the damage)\n", f)
			}
			fmt.Fprintf(out, "backups: %s\n", strings.Join(fr.Backups, " "))
			return nil
		},
	})
	return cmd
}

// errNoManifest makes `aof check` exit 1 on log files without a manifest.
var errNoManifest = errors.New("the append-only files have no manifest (see above)")

// orphanLayout is a layout of the log files in dir/appendonlydir (or dir) when there is no
// manifest, as FromOrphans suggests it; false if there are none.
func orphanLayout(dir string) (*aof.Layout, bool) {
	for _, d := range []string{filepath.Join(dir, aof.DirName), dir} {
		l := aof.NewLayout(fsys.OS{}, filepath.Dir(d), "")
		l.Dir = d
		if names, err := l.Orphans(); err == nil && len(names) > 0 {
			l.FromOrphans(names)
			return l, true
		}
	}
	return nil, false
}

// openLayout finds the manifest in dir/appendonlydir or in dir itself.
func openLayout(dir string) (*aof.Layout, error) {
	for _, d := range []string{filepath.Join(dir, aof.DirName), dir} {
		ms, _ := filepath.Glob(filepath.Join(d, "*.manifest"))
		if len(ms) == 1 {
			prefix := strings.TrimSuffix(filepath.Base(ms[0]), ".manifest")
			l := aof.NewLayout(fsys.OS{}, filepath.Dir(d), prefix)
			l.Dir = d
			return l, nil
		}
		if len(ms) > 1 {
			return nil, usageError{fmt.Errorf("%s: more than one manifest: %v", d, ms)}
		}
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, usageError{err}
	}
	return nil, usageError{fmt.Errorf("%s: no append-only manifest in it or in %s", dir, filepath.Join(dir, aof.DirName))}
}
