//go:build linux

package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/trace"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
	"qbench/scenarios"
)

// TestFloorSplit splits the latency floor (1,000 msg/s, one message per round trip, LPUSH of
// 256 B) into the layers qbench's path crosses, each paced by the runner's own precise sleep and
// interleaved round by round, so that a loaded machine moves them all alike (read the ratios):
//
//	raw      net.Conn write, then a blocking read (Go's network poller)
//	goredis  go-redis Conn().Do on a connection of its own
//	pipe     go-redis Conn().Pipelined with Do (the push path of qbench's producer)
//	qbench   redisq's Producer.Send (dedicated connection, pipeline), busy polling off
//	qbenchspin  the same with busy polling (QBENCH_REDIS_SPIN=100us)
//	qbenchctx, qbenchhold: qbench with the runner's send context (a deadline), and with its
//	         hold timer around each Send (produce.go)
//	run, runspin, run-c0, runspin-c0: the whole runner on the floor scenario (produce p50
//	includes the send delay), with and without busy polling, with no consumer (-c0)
//
// each alone and with a consumer blocked in BLMPOP on the same list (+cons; +consy: the
// consumer yields after each pop), as in the floor scenario. A benchmark, not a test: it runs
// only with QBENCH_FLOOR_ADDR naming a redis-server (QBENCH_FLOOR_ROUNDS rounds, QBENCH_FLOOR_N
// messages each, QBENCH_FLOOR_ONLY a comma list, QBENCH_FLOOR_TRACE a directory for a runtime
// trace of each variant).
func TestFloorSplit(t *testing.T) {
	addr := os.Getenv("QBENCH_FLOOR_ADDR")
	if addr == "" {
		t.Skip("QBENCH_FLOOR_ADDR not set: a benchmark, run by hand")
	}
	rounds, n := envInt("QBENCH_FLOOR_ROUNDS", 3), envInt("QBENCH_FLOOR_N", 2000)
	variants := []string{"raw", "goredis", "pipe", "qbench", "qbenchspin", "raw+cons", "goredis+cons", "qbench+cons", "qbenchspin+cons"}
	if only := os.Getenv("QBENCH_FLOOR_ONLY"); only != "" {
		variants = strings.Split(only, ",")
	}
	ctx := context.Background()
	payload := make([]byte, 256)
	for r := 1; r <= rounds; r++ {
		base := 0.0
		for _, v := range variants {
			if strings.HasPrefix(v, "run") {
				floorRun(t, ctx, addr, r, v)
				continue
			}
			lat, cpu := floorVariant(t, ctx, addr, v, payload, n)
			slices.Sort(lat)
			p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
			if v == variants[0] {
				base = float64(p50)
			}
			t.Logf("round %d %-14s p50 %6.1f us  p99 %7.1f us  p50/%s %.2f  cpu/msg %5.1f us",
				r, v, us(p50), us(p99), variants[0], float64(p50)/base, cpu/float64(n)/1e3)
		}
	}
}

func envInt(name string, def int) int {
	var v int
	if _, err := fmt.Sscan(os.Getenv(name), &v); err == nil && v > 0 {
		return v
	}
	return def
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

// floorVariant sends n LPUSHes paced at 1 ms and returns each round trip and the process's CPU
// (ns) over them.
func floorVariant(t *testing.T, ctx context.Context, addr, variant string, payload []byte, n int) ([]time.Duration, float64) {
	name, yield := strings.CutSuffix(variant, "+consy")
	name, cons := strings.CutSuffix(name, "+cons")
	cons = cons || yield
	key := "floorsplit:" + name
	admin := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer admin.Close()
	admin.Del(ctx, key)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	if cons {
		cc := admin.Conn()
		go func() {
			defer close(done)
			defer cc.Close()
			for cctx.Err() == nil {
				cc.Do(cctx, "BLMPOP", "0.100", 1, key, "RIGHT", "COUNT", 1)
				if yield { // let a goroutine readied by the same poll (the producer) go first
					runtime.Gosched()
				}
				// The runner's work on a delivery: decode, ledger, recorders.
				for t0 := time.Now(); time.Since(t0) < 5*time.Microsecond; {
				}
			}
		}()
	} else {
		close(done)
	}
	var send func() error
	switch name {
	case "raw", "rawspin":
		var c net.Conn
		var err error
		c, err = net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cmd := fmt.Appendf(nil, "*3\r\n$5\r\nLPUSH\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(key), key, len(payload), payload)
		rd := bufio.NewReader(c)
		send = func() error {
			if _, err := c.Write(cmd); err != nil {
				return err
			}
			_, err := rd.ReadSlice('\n')
			return err
		}
	case "goredis", "pipe", "goredisnodl":
		timeout := 10 * time.Second
		if name == "goredisnodl" { // no deadlines set at all
			timeout, name = -2, "goredis"
		}
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, ContextTimeoutEnabled: true, ReadTimeout: timeout, WriteTimeout: timeout})
		defer c.Close()
		conn := c.Conn()
		defer conn.Close()
		if name == "goredis" {
			send = func() error { return conn.Do(ctx, "LPUSH", key, payload).Err() }
		} else {
			send = func() error {
				_, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error { p.Do(ctx, "LPUSH", key, payload); return nil })
				return err
			}
		}
	case "qbench", "qbenchspin", "qbenchctx", "qbenchhold":
		// qbench with busy polling off; qbenchspin with redisq's default.
		if name == "qbenchspin" {
			t.Setenv("QBENCH_REDIS_SPIN", "100us")
		} else {
			t.Setenv("QBENCH_REDIS_SPIN", "0")
		}
		reg, err := engines.Lookup("redis-url")
		if err != nil {
			t.Fatal(err)
		}
		e, err := reg.New(ctx, engines.Spec{RunID: "floorsplit", Design: "list", Producers: 1, Consumers: 1, Address: addr})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if f, ok := e.(engines.FactReporter); ok {
			defer func() { t.Logf("%s: spin stats %v", variant, f.Facts(ctx).Stats) }()
		}
		p, err := e.NewProducer(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		errs := make([]error, 1)
		pl := [][]byte{payload}
		sctx := ctx
		if name == "qbenchctx" || name == "qbenchhold" { // the runner's send context
			var cancel context.CancelFunc
			sctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Hour))
			defer cancel()
		}
		send = func() error { p.Send(sctx, pl, errs); return errs[0] }
		if name == "qbenchhold" { // and its hold timer (produce.go)
			send = func() error {
				t := time.AfterFunc(800*time.Microsecond, func() {})
				p.Send(sctx, pl, errs)
				t.Stop()
				return errs[0]
			}
		}
	default:
		t.Fatalf("unknown variant %q", variant)
	}
	for range 50 { // warm up: connections, pools
		if err := send(); err != nil {
			t.Fatal(err)
		}
	}
	lat := make([]time.Duration, n)
	if dir := os.Getenv("QBENCH_FLOOR_TRACE"); dir != "" { // a runtime trace of each variant
		f, err := os.Create(fmt.Sprintf("%s/%s.trace", dir, variant))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		trace.Start(f)
		defer trace.Stop()
	}
	cpu0 := cpuNs()
	next := time.Now()
	for i := range n {
		next = next.Add(time.Millisecond)
		preciseSleep(time.Until(next))
		t0 := time.Now()
		if err := send(); err != nil {
			t.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	cpu := cpuNs() - cpu0
	cancel()
	<-done
	admin.Del(ctx, key)
	return lat, cpu
}

func cpuNs() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano() + ru.Stime.Nano())
}

// floorRun runs the floor scenario (scenarios/library/generator/floor-list.yaml, 6 s) through the runner and
// logs its produce and end-to-end percentiles.
func floorRun(t *testing.T, ctx context.Context, addr string, round int, variant string) {
	spin := strings.HasPrefix(variant, "runspin")
	if spin {
		t.Setenv("QBENCH_REDIS_SPIN", "100us")
	} else {
		t.Setenv("QBENCH_REDIS_SPIN", "0")
	}
	src := fmt.Sprintf("engine: redis-url\naddress: %s\ndesign: list\nproducers: 1\nconsumers: 1\nrate: 1000\nmessage_size: 256\nduration: 6s\nwarmup: 1s\n", addr)
	if strings.HasSuffix(variant, "-c0") {
		src += "role: produce\nnames: {list: \"floorsplit:c0\"}\n"
	}
	sc, err := scenarios.Parse("floor.yaml", []byte(src), Checks())
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, ctx, sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := res.Summary.Latency
	t.Logf("round %d %-14s produce p50 %6.1f us  p99 %7.1f us  send_delay p50 %5.1f  e2e p50 %6.1f p99 %7.1f  cpu/msg %5.1f us  %v",
		round, variant, float64(l["produce"].P50)/1e3, float64(l["produce"].P99)/1e3, float64(l["send_delay"].P50)/1e3,
		float64(l["e2e"].P50)/1e3, float64(l["e2e"].P99)/1e3, res.Summary.Generator.CPUPerMessageNs/1e3, spinStats(res.Engine.Stats))
	redis.NewClient(&redis.Options{Addr: addr}).Del(ctx, "floorsplit:c0")
}

func spinStats(m map[string]int64) string {
	if m["spin_max_ns"] == 0 {
		return ""
	}
	return fmt.Sprintf("spin hits %d misses %d, %.1f us/msg", m["spin_hits"], m["spin_misses"], float64(m["spin_ns"])/float64(max(m["spin_hits"]+m["spin_misses"], 1))/1e3)
}
