package scenarios

import (
	"strings"
	"testing"
)

// The memory budget bounds what the compact ledger keeps: the backlog it can foresee (the rate
// over a minute, the drain timeout and the faults, a backlog fill) in bytes per unresolved
// message (per receiving group) for each producer's first 92160 and the dense form's most
// beyond, and 1/256 byte per message sent; the message names the file,
// the line and field, the numbers, the assumption and the budget's source. rate: max is not
// refused (it has no schedule).
func TestMemoryBudgetBoundsTheRun(t *testing.T) {
	const budget = 1 << 30 // 1 GiB: a backlog of about 120M messages of one group in the dense form
	cases := []struct {
		name, yaml, want string // want "" passes
	}{
		{"the issue's 1M/s for an hour: a minute's backlog fits in the dense form", "rate: 1000000\nduration: 1h\n", ""},
		{"a backlog of an hour at 1M/s does not", "rate: 1000000\nduration: 2h\nfaults:\n  - {at: 30m, kind: consumer-pause, consumer: 0, duration: 1h}\n",
			"f.yaml:1: rate: 1e+06 messages per second for 2h0m0s is 7.2e+09 messages; the ledger keeps an unresolved one (sent, not yet delivered to every group) in 40 bytes (1 receiving group(s)) for the first 92160 of each producer's backlog and in at most 8.56 bytes beyond (acknowledged messages, in the dense form), and each settled one in 1/256 byte: with a backlog of up to 3.67e+09 messages (the rate over 1h1m5s: a minute for latency and recovery, drain_timeout 5s, the faults' 1h0m0s; and 8192 per producer a loss can hold) that is 29.3 GiB, more than the memory budget 1.0 GiB (--memory-budget)"},
		{"consumers stopped ten minutes at 100k/s", "rate: 100000\nduration: 1h\nfaults:\n  - {at: 10m, kind: consumer-pause, consumer: 0, duration: 10m}\n", ""},
		{"100k/s for a day", "rate: 100000\nduration: 24h\n", ""},
		{"within the budget", "rate: 400000\nduration: 1h\n", ""},
		{"two stream groups need more", "rate: 1000000\nduration: 1h\nconsumers: 2\nredis:\n  stream:\n    groups: 2\nfaults:\n  - {at: 30m, kind: consumer-pause, consumer: 0, duration: 10m}\n",
			"in 48 bytes (2 receiving group(s)) for the first 92160 of each producer's backlog and in at most 10.7 bytes beyond"},
		{"each subscriber is a group", "design: pubsub\nrate: 1000000\nduration: 1000s\nconsumers: 20\n",
			"f.yaml:2: rate: 1e+06 messages per second for 16m40s is 1e+09 messages; the ledger keeps an unresolved one (sent, not yet delivered to every group) in 192 bytes (20 receiving group(s)) for the first 92160 of each producer's backlog and in at most 48.9 bytes beyond"},
		{"a profile's peak", "duration: 600s\nprofile:\n  ramp: {from: 1000, to: 5000000}\n",
			"f.yaml:2: profile: up to 5e+06 messages per second for 10m0s is 3e+09 messages"},
		{"a backlog fill adds to the backlog", "rate: 900000\nduration: 300s\nbacklog:\n  duration: 300s\n",
			"for 5m0s and its backlog fill is 5.4e+08 messages; the ledger keeps an unresolved one (sent, not yet delivered to every group) in 40 bytes (1 receiving group(s)) for the first 92160 of each producer's backlog and in at most 8.56 bytes beyond (acknowledged messages, in the dense form), and each settled one in 1/256 byte: with a backlog of up to 3.29e+08 messages (the rate over 1m5s: a minute for latency and recovery, drain_timeout 5s; the backlog phase's fill;"},
		{"a consumer that never comes back holds the rest of the run", "rate: 100000\nduration: 24h\nconsumers: 2\nfaults:\n  - {at: 1h, kind: consumer-crash, consumer: 0}\n",
			"the rate over 23h1m5s: a minute for latency and recovery, drain_timeout 5s, the faults' 23h0m0s;"},
		{"a fault's duration adds to the backlog", "rate: 100000\nduration: 24h\nfaults:\n  - {at: 1h, kind: stall, duration: 1m}\n", ""},
		{"rate: max has no schedule", "rate: max\nduration: 24h\n", ""},
		{"one producer numbers more than 4G messages", "rate: 100000\nduration: 24h\nproducers: 1\n", ""},
		{"a produce-only run keeps every message", "rate: 100000\nduration: 600s\nrole: produce\nnames: {stream: s}\n",
			"f.yaml:1: rate: 100000 messages per second for 10m0s is 6e+07 messages; a segmented or produce-only run's ledger keeps 21 bytes for each (1 receiving group(s)), 1.2 GiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checks := testChecks
			checks.MemoryBudget = budget
			_, err := Parse("f.yaml", []byte(c.yaml), checks)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

// The budget: the flag's figure, else the environment's, else half of MemAvailable; the cap of a
// rate: max run is the budget over the bytes per message.
// A segment keeps the reference ledger, every message until the end: CheckReferenceLedger bounds
// rate x schedule x 17 bytes and 4 per group, and one producer's messages by what it numbers.
func TestReferenceLedgerBoundsASegment(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"within", "rate: 10000\nduration: 60s\n", ""},
		{"every message kept", "rate: 1000000\nduration: 1h\n",
			"rate: 1e+06 messages per second for 1h0m0s is 3.6e+09 messages; a segmented or produce-only run's ledger keeps 21 bytes for each (1 receiving group(s)), 70.4 GiB, more than the memory budget 1.0 GiB (--memory-budget)"},
		{"one producer numbers 4G messages", "rate: 100000\nduration: 24h\n", "each of the 1 producers would send 8.64e+09 messages, more than the 4294967295"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checks := testChecks
			checks.MemoryBudget = 1 << 30
			checks.MemoryBudget *= 1000 // validation passes; the segment's bound is the one tested
			sc, err := Parse("f.yaml", []byte(c.yaml), checks)
			if err != nil {
				t.Fatal(err)
			}
			sc.checks.MemoryBudget = 1 << 30
			err = sc.CheckReferenceLedger()
			if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

func TestMemoryBudgetSources(t *testing.T) {
	t.Setenv(MemoryBudgetEnv, "")
	m, err := ResolveMemoryBudget(0)
	if err != nil || m.Bytes <= 0 || !strings.Contains(m.Source, "MemAvailable") {
		t.Fatalf("machine budget %+v, %v", m, err)
	}
	t.Setenv(MemoryBudgetEnv, "2GiB")
	if m, err := ResolveMemoryBudget(0); err != nil || m.Bytes != 2<<30 || m.Source != "$"+MemoryBudgetEnv {
		t.Fatalf("env budget %+v, %v", m, err)
	}
	if m, _ := ResolveMemoryBudget(5e9); m.Bytes != 5e9 || m.Source != "--memory-budget" {
		t.Fatalf("flag budget %+v", m)
	}
	t.Setenv(MemoryBudgetEnv, "lots")
	if _, err := ResolveMemoryBudget(0); err == nil || !strings.Contains(err.Error(), `"lots" is not a size`) {
		t.Fatalf("bad env: %v", err)
	}
	for in, want := range map[string]int64{"512MiB": 512 << 20, "4GB": 4e9, "1e6": 1e6, "100 KiB": 100 << 10} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	checks := testChecks
	checks.MemoryBudget = 21_000_000
	sc, err := Parse("f.yaml", []byte("rate: max\nduration: 1s\n"), checks)
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.MessageCap(); got != 1_000_000 {
		t.Fatalf("MessageCap %d, want 1000000", got)
	}
}
