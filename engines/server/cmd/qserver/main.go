// Command qserver runs the in-repo server on its own, for redis-cli, redis-benchmark and manual
// checks: qserver -addr 127.0.0.1:7777. It prints the address on stdout and stops on SIGINT,
// SIGTERM or SHUTDOWN.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"qbench/engines/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	pass := flag.String("requirepass", "", "password (empty: none)")
	verbose := flag.Bool("v", false, "log to stderr")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file until stopped")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "qserver:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	cfg := server.Config{Addr: *addr, RequirePass: *pass}
	if *verbose {
		cfg.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	}
	if err := server.ServeUntilSignal(server.New(cfg), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "qserver:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}
