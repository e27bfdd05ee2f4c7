// Command qserver runs the in-repo server on its own, for redis-cli, redis-benchmark and manual
// checks: qserver -addr 127.0.0.1:7777. It prints the address on stdout and stops on SIGINT.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

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
	s := server.New(cfg)
	if err := s.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "qserver:", err)
		os.Exit(1)
	}
	fmt.Println(s.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	s.Close()
}
