package scenarios

import (
	"strings"
	"testing"
)

// The memory budget bounds rate x schedule x the ledger's bytes per message (per receiving
// group); the message names the file, the line and field, the numbers and the budget's source.
// rate: max is not refused (it has no schedule) but gets a message cap from the same budget.
func TestMemoryBudgetBoundsTheRun(t *testing.T) {
	const budget = 1 << 30 // 1 GiB: 51M messages of one group, 42M of two
	cases := []struct {
		name, yaml, want string // want "" passes
	}{
		{"the issue's 1M/s for an hour", "rate: 1000000\nduration: 1h\n",
			"f.yaml:1: rate: 1e+06 messages per second for 1h0m0s is 3.6e+09 messages; the ledger keeps 21 bytes for each (1 receiving group(s)), 70.4 GiB, more than the memory budget 1.0 GiB (--memory-budget)"},
		{"within the budget", "rate: 100000\nduration: 500s\n", ""},
		{"two stream groups need more", "rate: 100000\nduration: 500s\nconsumers: 2\nredis:\n  stream:\n    groups: 2\n",
			"the ledger keeps 25 bytes for each (2 receiving group(s)), 1.2 GiB"},
		{"each subscriber is a group", "design: pubsub\nrate: 20000\nduration: 1000s\nconsumers: 20\n",
			"f.yaml:2: rate: 20000 messages per second for 16m40s is 2e+07 messages; the ledger keeps 97 bytes for each (20 receiving group(s))"},
		{"a profile's peak", "duration: 600s\nprofile:\n  ramp: {from: 1000, to: 200000}\n",
			"f.yaml:2: profile: up to 200000 messages per second for 10m0s is 1.2e+08 messages"},
		{"a backlog fill adds to the duration", "rate: 90000\nduration: 300s\nbacklog:\n  duration: 300s\n",
			"for 5m0s and its backlog fill is 5.4e+07 messages"},
		{"rate: max has no schedule", "rate: max\nduration: 24h\n", ""},
		{"one producer numbers 4G messages", "rate: 10000000\nduration: 24h\nproducers: 100\n", "each of the 100 producers would send 8.64e+09 messages, more than the 4294967295"},
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
