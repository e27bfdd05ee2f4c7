// Package resultstest builds deterministic results for tests of everything that reads result
// files (compare, gates, exports, plots, the report), so that those tests need no server.
package resultstest

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/results"
)

// Options shape a synthetic run.
type Options struct {
	Name    string
	Engine  string
	Design  string
	Seed    uint64
	Seconds int
	Warmup  int
	// Rate is messages per second, all acknowledged and delivered.
	Rate int
	// ProduceMedian is the typical produce latency; e2e adds E2EExtra to it.
	ProduceMedian time.Duration
	E2EExtra      time.Duration
	// Stall is a fault: from StallAt (seconds) for StallFor, messages wait for the stall's end.
	StallAt  time.Duration
	StallFor time.Duration
	// Lost and Duplicates go into the ledger.
	Lost, Duplicates int64
	// Gates go into the scenario.
	Gates []string
}

func (o *Options) defaults() {
	if o.Name == "" {
		o.Name = "fixture"
	}
	if o.Engine == "" {
		o.Engine = "embedded"
	}
	if o.Design == "" {
		o.Design = "stream"
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Seconds == 0 {
		o.Seconds = 10
	}
	if o.Rate == 0 {
		o.Rate = 1000
	}
	if o.ProduceMedian == 0 {
		o.ProduceMedian = 400 * time.Microsecond
	}
	if o.E2EExtra == 0 {
		o.E2EExtra = 300 * time.Microsecond
	}
}

// Epoch is every fixture's start time.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Make builds a result as the runner would write it: the per-second series with its
// per-interval histograms, the whole measured window's histograms, and the summary read from
// them. The same options always give the same result.
func Make(o Options) *results.Result {
	o.defaults()
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	kinds := results.LatencyKinds
	whole := map[string]*hdrhistogram.Histogram{}
	for _, k := range kinds {
		whole[k] = results.NewHistogram()
	}
	var series []results.Interval
	// The latency bins, as the runner keeps them: each latency in the bin of its intended send
	// time and in the bin of its completion (intended plus the latency).
	binW := results.BinWidth(time.Duration(o.Seconds)*time.Second, o.StallFor > 0)
	bins := map[results.BinKey]*hdrhistogram.Histogram{}
	bin := func(e2e bool, intended, latency time.Duration) {
		for _, k := range []results.BinKey{{Intended: true, E2E: e2e, Index: int64(intended / binW)}, {E2E: e2e, Index: int64((intended + latency) / binW)}} {
			if bins[k] == nil {
				bins[k] = results.NewBinHistogram()
			}
			_ = bins[k].RecordValue(int64(latency))
		}
	}
	var lag, lagMax int64
	var sent int64
	for s := 0; s < o.Seconds; s++ {
		iv := map[string]*hdrhistogram.Histogram{}
		for _, k := range kinds {
			iv[k] = results.NewHistogram()
		}
		start := time.Duration(s) * time.Second
		for n := 0; n < o.Rate; n++ {
			intended := start + time.Duration(n)*time.Second/time.Duration(o.Rate)
			noise := math.Exp(0.35 * rng.NormFloat64())
			if rng.IntN(1000) == 0 { // a rare slow one, for a tail
				noise *= 8
			}
			produce := time.Duration(float64(o.ProduceMedian) * noise)
			if o.StallFor > 0 && intended >= o.StallAt && intended < o.StallAt+o.StallFor {
				produce += o.StallAt + o.StallFor - intended
			}
			send := time.Duration(20_000 + rng.IntN(60_000))
			e2e := produce + time.Duration(float64(o.E2EExtra)*math.Exp(0.3*rng.NormFloat64()))
			bin(false, intended, produce)
			bin(true, intended, e2e)
			for k, v := range map[string]time.Duration{"produce": produce, "send_delay": send, "e2e": e2e} {
				_ = iv[k].RecordValue(int64(v))
				if s >= o.Warmup {
					_ = whole[k].RecordValue(int64(v))
				}
			}
		}
		sent += int64(o.Rate)
		// Lag grows during a stall and drains after it.
		if o.StallFor > 0 && start+time.Second > o.StallAt && start < o.StallAt+o.StallFor {
			lag += int64(float64(o.Rate) * o.StallFor.Seconds())
		} else {
			lag /= 4
		}
		lagMax = max(lagMax, lag)
		interval := results.Interval{
			StartNs:    int64(start),
			Warmup:     s < o.Warmup,
			Acked:      int64(o.Rate),
			Deliveries: int64(o.Rate),
			// 256-byte payloads, as the summary's byte rates say.
			AckedBytes:     256 * int64(o.Rate),
			DeliveredBytes: 256 * int64(o.Rate),
			Lag:            lag,
			EngineLag:      &results.EngineLag{Backlog: lag / 2, Pending: lag - lag/2, OldestPendingNs: lag * int64(time.Millisecond) / int64(o.Rate)},
			Produce:        results.Summarise(iv["produce"]),
			SendDelay:      results.Summarise(iv["send_delay"]),
			E2E:            results.Summarise(iv["e2e"]),
			Histograms:     map[string]string{},
		}
		for _, k := range kinds {
			interval.Histograms[k] = must(results.EncodeHistogram(iv[k]))
		}
		if s < o.Warmup { // every message of a warm-up second was intended in the warm-up
			interval.WarmupHistograms = maps.Clone(interval.Histograms)
		}
		series = append(series, interval)
	}
	measured := float64(o.Seconds - o.Warmup)
	sc := map[string]any{
		"name": o.Name, "engine": o.Engine, "design": o.Design, "producers": 2, "consumers": 2,
		"rate": fmt.Sprint(o.Rate), "message_size": 256, "duration": (time.Duration(o.Seconds) * time.Second).String(),
		"warmup": (time.Duration(o.Warmup) * time.Second).String(), "seed": o.Seed,
	}
	if o.StallFor > 0 {
		sc["faults"] = []map[string]string{{"at": o.StallAt.String(), "kind": "stall", "duration": o.StallFor.String()}}
	}
	if len(o.Gates) > 0 {
		sc["gates"] = o.Gates
	}
	scJSON, _ := json.Marshal(sc)
	r := &results.Result{
		SchemaVersion: results.SchemaVersion,
		Tool:          "qbench test",
		RunID:         fmt.Sprintf("%s-%d", o.Name, o.Seed),
		StartedAt:     Epoch,
		Scenario:      scJSON,
		Engine:        results.Engine{Name: o.Engine, Design: o.Design, Version: "7.0.0", Settings: map[string]string{"appendfsync": "everysec"}},
		Machine:       results.Machine{CPUs: 2, OS: "linux", Arch: "amd64", GoVersion: "go1.26", Hostname: "fixture"},
		Series:        series,
		Bins:          results.BuildLatencySeries(int64(binW), bins),
		Histograms:    map[string]string{},
	}
	r.Summary = results.Summary{
		MeasuredSeconds: measured,
		ProduceRate:     float64(whole["produce"].TotalCount()) / measured,
		DeliverRate:     float64(whole["e2e"].TotalCount()) / measured,
		OfferedRate:     float64(o.Rate),
		Latency:         map[string]results.Latency{},
		LagMax:          lagMax,
		EngineLagMax:    lagMax,
		Ledger: results.Ledger{Sent: sent, Acked: sent, Delivered: sent - o.Lost, Deliveries: sent - o.Lost + o.Duplicates,
			Lost: o.Lost, Duplicates: o.Duplicates, DuplicatedMessages: o.Duplicates},
	}
	// Payloads of 256 bytes, as the scenario says.
	r.Summary.ProduceBytesRate, r.Summary.DeliverBytesRate = 256*r.Summary.ProduceRate, 256*r.Summary.DeliverRate
	for _, k := range kinds {
		r.Summary.Latency[k] = results.Summarise(whole[k])
		r.Histograms[k] = must(results.EncodeHistogram(whole[k]))
	}
	for i := int64(0); i < min(o.Lost, 100); i++ {
		r.Lost = append(r.Lost, results.MessageID{Producer: 0, Seq: uint64(i * 7)})
	}
	return r
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}
