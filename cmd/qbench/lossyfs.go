package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"qbench/engines/lossyfs"
)

// lossyfsCmd runs the power-loss file system by hand: `mount` serves it in the foreground, and the
// other subcommands reach that process through its control socket.
func lossyfsCmd() *cobra.Command {
	var control string
	socket := func(mountpoint string) (string, error) {
		if control != "" {
			return control, nil
		}
		return lossyfs.ControlPath(mountpoint)
	}
	cmd := &cobra.Command{
		Use:   "lossyfs",
		Short: "A FUSE file system that keeps unsynced writes in memory and drops them on a power cut",
		Long: `lossyfs mounts a view of a backing directory in which written data stays in memory until
fsync/fdatasync; "cut" drops everything unsynced, as a power loss would, and makes every later
change fail with EIO until "recover". Metadata (create, rename, unlink) is durable at once.
Needs root (or fuse access), /dev/fuse and fusermount3 (Debian: apt-get install fuse3).`,
	}
	cmd.PersistentFlags().StringVar(&control, "control", "", "control socket (default: derived from the mount point, in $TMPDIR)")

	var opts lossyfs.Options
	mount := &cobra.Command{
		Use:   "mount BACKING MOUNTPOINT",
		Short: "Mount BACKING at MOUNTPOINT and serve it until interrupted (a clean unmount writes dirty data back, unless cut)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sock, err := socket(args[1])
			if err != nil {
				return err
			}
			f, err := lossyfs.Mount(args[0], args[1], opts)
			if err != nil {
				return err
			}
			os.Remove(sock) // a stale socket of an earlier mount
			l, err := net.Listen("unix", sock)
			if err != nil {
				return errors.Join(err, f.Unmount())
			}
			defer os.Remove(sock)
			if err := os.Chmod(sock, 0o600); err != nil { // only the mounting user may cut the power
				l.Close()
				return errors.Join(err, f.Unmount())
			}
			go lossyfs.ServeControl(l, f)
			fmt.Fprintf(os.Stderr, "qbench: lossyfs: %s mounted at %s; control socket %s; Ctrl-C unmounts\n", args[0], args[1], sock)
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			<-sigs
			l.Close()
			return f.Unmount()
		},
	}
	mount.Flags().BoolVar(&opts.NoBackingSync, "no-backing-sync", false, "do not fdatasync the backing file on a sync (faster; the simulation is unchanged)")
	mount.Flags().BoolVar(&opts.XAttrs, "xattrs", false, "pass extended attributes through (costs a FUSE round trip per write)")
	mount.Flags().BoolVar(&opts.AllowOther, "allow-other", false, "let other users use the mount")
	mount.Flags().BoolVar(&opts.Debug, "debug", false, "log every FUSE request to stderr")
	mount.Flags().DurationVar(&opts.CacheTimeout, "cache-timeout", 0, "how long the kernel caches names and attributes (0: 1s)")

	send := func(use, short, command string) *cobra.Command {
		return &cobra.Command{
			Use:   use + " MOUNTPOINT",
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				sock, err := socket(args[0])
				if err != nil {
					return err
				}
				detail, err := lossyfs.SendControl(sock, command)
				if err == nil && detail != "" {
					fmt.Fprintln(cmd.OutOrStdout(), detail)
				}
				return err
			},
		}
	}
	failWrites := &cobra.Command{
		Use:   "fail-writes MOUNTPOINT on|off",
		Short: "Simulate a full disk: writes and creates fail with ENOSPC while on",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			command := map[string]string{"on": lossyfs.CmdFailOn, "off": lossyfs.CmdFailOff}[args[1]]
			if command == "" {
				return usageError{fmt.Errorf("fail-writes: %q: want on or off", args[1])}
			}
			sock, err := socket(args[0])
			if err != nil {
				return err
			}
			_, err = lossyfs.SendControl(sock, command)
			return err
		},
	}
	failIO := &cobra.Command{
		Use:   "fail-io MOUNTPOINT write|fsync|off",
		Short: "Simulate a failing disk: writes (write) or fsyncs (fsync) fail with EIO until off",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[1] != "write" && args[1] != "fsync" && args[1] != "off" {
				return usageError{fmt.Errorf("fail-io: %q: want write, fsync or off", args[1])}
			}
			sock, err := socket(args[0])
			if err != nil {
				return err
			}
			_, err = lossyfs.SendControl(sock, lossyfs.CmdFailIO+" "+args[1])
			return err
		},
	}
	cmd.AddCommand(mount,
		send("cut", "Power cut: drop every unsynced write; later changes fail with EIO until recover", lossyfs.CmdCut),
		send("recover", "Power back on after a cut: changes are accepted again", lossyfs.CmdRecover),
		send("sync", "Write all unsynced data to the backing directory", lossyfs.CmdSync),
		send("status", "Print whether the power is cut, whether writes fail, and how much is unsynced", lossyfs.CmdStatus),
		failWrites, failIO)
	return cmd
}
