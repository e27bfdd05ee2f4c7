package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"qbench/bench"
)

// metricsPath is where --metrics-addr serves the live metrics.
const metricsPath = "/metrics"

// metricsFlags adds --metrics-addr and --metrics-linger to run.
func metricsFlags(cmd *cobra.Command) {
	cmd.Flags().String("metrics-addr", "", "serve live Prometheus metrics at http://HOST:PORT/metrics while the run goes (a bare :PORT is loopback; 0.0.0.0:PORT for a scraper elsewhere; port 0 picks one and says which); a view: the result file stays the exact record")
	cmd.Flags().Duration("metrics-linger", 0, "keep --metrics-addr serving this long after the run ends, so that a scraper takes the final figures (e.g. 3s with a 1s scrape interval, twice the interval in general)")
}

// startMetrics starts the endpoint of --metrics-addr (none when it is empty) and says on stderr
// where it listens. stop keeps it up for --metrics-linger, then closes it.
func startMetrics(cmd *cobra.Command) (m *bench.Metrics, stop func(), err error) {
	addr, _ := cmd.Flags().GetString("metrics-addr")
	linger, _ := cmd.Flags().GetDuration("metrics-linger")
	if addr == "" {
		if linger != 0 {
			return nil, nil, usageError{errors.New("--metrics-linger is for --metrics-addr: give the address too")}
		}
		return nil, func() {}, nil
	}
	if linger < 0 {
		return nil, nil, usageError{fmt.Errorf("--metrics-linger %s: want a duration >= 0", linger)}
	}
	if !strings.Contains(addr, ":") {
		return nil, nil, usageError{fmt.Errorf("--metrics-addr %q: want HOST:PORT (127.0.0.1:9464, or :9464 for loopback)", addr)}
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr // loopback unless a host is named
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("--metrics-addr %s: %w", addr, err)}
	}
	m = bench.NewMetrics()
	mux := http.NewServeMux()
	mux.Handle(metricsPath, promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{EnableOpenMetrics: true}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "qbench: live metrics at http://%s%s\n", ln.Addr(), metricsPath)
	return m, func() {
		if linger > 0 {
			time.Sleep(linger) // the scraper's last look at the final figures
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
