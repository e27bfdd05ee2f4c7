package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"qbench/engines/server"
	"qbench/engines/server/fsys"
)

func serveCmd() *cobra.Command {
	var port int
	var bind, requirePass, requirePassFile string
	var maxClients int
	var dir, appendonly, appendfsync, aofPrealloc, save, seedRDB, saveRDB string
	var simFS bool
	var enableDebug, enableProtected string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the in-repo Redis-protocol server standalone (for redis-cli, redis-benchmark, other clients)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return usageError{fmt.Errorf("--port %d: must be 0 to 65535", port)}
			}
			// The password, from (in order) --requirepass, --requirepass-file, QBENCH_REQUIREPASS.
			// Only the first shows in ps: say so when it is used.
			if requirePass != "" {
				fmt.Fprintln(os.Stderr, "qbench: warning: --requirepass is visible to every user in ps; prefer --requirepass-file or QBENCH_REQUIREPASS")
			} else if requirePassFile != "" {
				b, err := os.ReadFile(requirePassFile)
				if err != nil {
					return usageError{fmt.Errorf("--requirepass-file: %w", err)}
				}
				requirePass = strings.TrimRight(string(b), "\r\n")
				if requirePass == "" {
					return usageError{fmt.Errorf("--requirepass-file %s is empty", requirePassFile)}
				}
			} else {
				requirePass = os.Getenv("QBENCH_REQUIREPASS")
			}
			if appendonly != "yes" && appendonly != "no" {
				return usageError{fmt.Errorf("--appendonly %q: must be yes or no", appendonly)}
			}
			if seedRDB != "" {
				// Checked here too, so a wrong path is a usage error (exit 2) naming the file.
				f, err := os.Open(seedRDB)
				if err != nil {
					return usageError{fmt.Errorf("--seed-rdb: %w", err)}
				}
				f.Close()
			}
			if saveRDB != "" {
				if st, err := os.Stat(filepath.Dir(saveRDB)); err != nil || !st.IsDir() {
					return usageError{fmt.Errorf("--save-rdb %s: its directory does not exist", saveRDB)}
				}
			}
			var fs fsys.FS
			if simFS {
				sim := fsys.NewSim()
				sim.MkdirAll(dir)
				fs = sim
			}
			s := server.New(server.Config{
				FS:             fs,
				Addr:           net.JoinHostPort(bind, strconv.Itoa(port)),
				RequirePass:    requirePass,
				MaxClients:     maxClients,
				Logf:           func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) },
				Dir:            dir,
				AppendOnly:     appendonly == "yes",
				AppendFsync:    appendfsync,
				AOFPreallocate: aofPrealloc,
				Save:           save,
				SeedRDB:        seedRDB,

				EnableDebugCommand:     enableDebug,
				EnableProtectedConfigs: enableProtected,
			})
			// Before the server listens: a client that has been answered may signal at once, and
			// a signal before Notify would kill the process without --save-rdb's file.
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2)
			if err := s.Start(); err != nil {
				if errors.Is(err, server.ErrSeed) || errors.As(err, new(*server.ConfigError)) {
					return usageError{err}
				}
				return err
			}
			fmt.Fprintf(os.Stderr, "qbench: serving Redis protocol (%s); the address is on stdout\n", server.Version())
			// The address on stdout, alone, so a script can read it (useful with --port 0).
			fmt.Fprintln(cmd.OutOrStdout(), s.Addr())
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
			// stop closes the server, first writing --save-rdb (a real file, even with --simulated-fs).
			stop := func() error {
				var err error
				if saveRDB != "" {
					if err = s.SaveRDB(saveRDB); err == nil {
						fmt.Fprintf(os.Stderr, "qbench: dataset written to %s as a Redis 7.0 dump.rdb\n", saveRDB)
					} else {
						err = fmt.Errorf("--save-rdb: %w", err)
					}
				}
				return errors.Join(err, s.Close())
			}
			for {
				var sig os.Signal
				select {
				case sig = <-sigs:
				case <-s.Done(): // SHUTDOWN, or an AOF error under always (Redis exits 1)
					if err := s.Err(); err != nil {
						s.Close()
						return fmt.Errorf("server stopped: %w", err)
					}
					return stop()
				}
				if sig != syscall.SIGUSR1 && sig != syscall.SIGUSR2 {
					return stop()
				}
				// Fault hooks (engines/server/README.md): SIGUSR1 = power loss, SIGUSR2 = process
				// crash, both with a restart on the same port.
				if !simFS {
					fmt.Fprintln(os.Stderr, "qbench: SIGUSR1/SIGUSR2 simulate crashes only with --simulated-fs; kill -9 crashes the process")
					continue
				}
				var err error
				what := "power loss"
				if sig == syscall.SIGUSR1 {
					s, err = s.PowerLoss(true, rng)
				} else {
					what = "process crash"
					s.Crash()
					s, err = s.Restart()
				}
				if err != nil {
					return fmt.Errorf("restart after a simulated %s: %w", what, err)
				}
				fmt.Fprintf(os.Stderr, "qbench: simulated %s; recovered and serving on %s\n", what, s.Addr())
			}
		},
	}
	cmd.Flags().IntVar(&port, "port", 6379, "TCP port (0 picks a free one)")
	cmd.Flags().StringVar(&bind, "bind", "127.0.0.1", "address to listen on (an IPv4 address listens on IPv4 only); while no password is set, protected mode refuses clients not on loopback, as Redis does")
	cmd.Flags().StringVar(&requirePass, "requirepass", "", "password clients must AUTH with; visible in ps: prefer --requirepass-file or the QBENCH_REQUIREPASS environment variable")
	cmd.Flags().StringVar(&requirePassFile, "requirepass-file", "", "read the password from this file (first line), keeping it out of ps")
	cmd.Flags().IntVar(&maxClients, "maxclients", 10000, "most clients connected at once")
	cmd.Flags().StringVar(&dir, "dir", ".", "directory for the append-only files (appendonlydir/) and snapshots (dump.qdb)")
	cmd.Flags().StringVar(&appendonly, "appendonly", "no", "yes: log every write to the append-only file and replay it at start")
	cmd.Flags().StringVar(&appendfsync, "appendfsync", "everysec", "always (fsync before replying; group commit), everysec or no")
	cmd.Flags().StringVar(&aofPrealloc, "aof-preallocate", "yes", "yes: keep synced zeros written ahead of the log so a commit's fdatasync journals no size change (qbench's own; Redis has no such setting); no: grow the file with every append, as Redis does")
	cmd.Flags().BoolVar(&simFS, "simulated-fs", false, "keep --dir in memory on a file system that tracks fsyncs: SIGUSR1 then simulates a power loss, SIGUSR2 a process crash (each followed by recovery)")
	cmd.Flags().StringVar(&enableDebug, "enable-debug-command", "no", "DEBUG (it can stall every client): no, yes, or local (loopback clients only), as Redis 7")
	cmd.Flags().StringVar(&enableProtected, "enable-protected-configs", "no", "CONFIG SET dir/dbfilename at run time: no, yes, or local, as Redis 7")
	cmd.Flags().StringVar(&seedRDB, "seed-rdb", "", "start from this dump.rdb written by Redis 6.x/7.0 (strings, lists, sets, hashes, streams; expired keys dropped) when --dir holds no snapshot and no AOF")
	cmd.Flags().StringVar(&saveRDB, "save-rdb", "", "at exit (SIGINT, SIGTERM, SHUTDOWN) write the dataset to this file as a Redis 7.0 dump.rdb (LZF per CONFIG rdbcompression), which redis-server loads")
	cmd.Flags().StringVar(&save, "save", "", `snapshot rules "<seconds> <changes> ...", e.g. "3600 1 300 100"; "" = none`)
	switchFlag(cmd)
	return cmd
}
