package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"qbench/engines/redisq"
	"qbench/results"
)

// switches are the environment variables that change what qbench (or a server it starts)
// does, with the value each has when unset. One set to anything else is printed at start-up
// and recorded in the result (scenario.environment), so two results that differ because of one
// say so. Variables that only select tests, or that qbench sets for its own children, are in
// notSwitches; TestEveryQBenchVariableIsDeclared holds the two lists to the source.
var switches = map[string]string{
	"QBENCH_MEMORY_BUDGET":            "",  // the ledger's memory budget (as --memory-budget)
	"QBENCH_REDIS_SERVER":             "",  // the redis-server binary the managed Redis engines start
	"QBENCH_REDIS_SENTINEL":           "",  // the redis-sentinel binary the redis-sentinel engine starts
	"QBENCH_KAFKA_HOME":               "",  // the Kafka broker's jars
	"QBENCH_KAFKA_VERSION":            "",  // which Kafka release's jars
	"QBENCH_KAFKA_DATA":               "",  // where a managed broker keeps its data
	"QBENCH_REDIS_SPIN":               "",  // busy-poll a reply's socket before parking (off)
	"QBENCH_CONSUMER_OSYIELD":         "",  // 1: yield the OS thread after each receive (off)
	"QBENCH_SERVER_LOOP_YIELD":        "1", // 0: the in-repo server's loop never yields
	"QBENCH_SERVER_LOOP_YIELD_WOKEN":  "",  // 1: yield after a turn that woke clients (off)
	"QBENCH_SERVER_BLOCK_IN_LOOP":     "1", // 0: blocked clients leave the event loop
	"QBENCH_SERVER_SUBSCRIBE_IN_LOOP": "1", // 0: subscribers leave the event loop
	"QBENCH_SERVER_LOOP_SPIN_US":      "",  // the loop's adaptive poll bound (default built in)
	"QBENCH_SERVER_INLINE_FSYNC":      "1", // 0: appendfsync always syncs on the scheduler
	"QBENCH_SERVER_RUNTIME_STATS":     "",  // 1: the server prints runtime statistics at exit
	"QBENCH_SERVER_TRACE":             "",  // the server writes an execution trace here
	"QBENCH_SERVER_ALLOCPROFILE":      "",  // the server writes an allocation profile here
}

// notSwitches change no measurement: test selectors, test helpers' own variables, a password,
// and the variables qbench sets for the children it starts.
var notSwitches = []string{
	"QBENCH_REQUIREPASS", "QBENCH_CHILD_SERVER", "QBENCH_SERVER_CHILD", "QBENCH_SERVER_CHILD_HOG_FDS",
	"QBENCH_PERSIST_CHILD", "QBENCH_PROCS_DEATH_HELPER", "QBENCH_TEST_PIN_CHILD", "QBENCH_SOAK",
	"QBENCH_LONG_TESTS", "QBENCH_KAFKA_TESTS", "QBENCH_MEMTEST", "QBENCH_SEED", "QBENCH_HDR_JAR",
	"QBENCH_BENCH_ADDR", "QBENCH_FLOOR_ADDR", "QBENCH_FLOOR_N", "QBENCH_FLOOR_ONLY",
	"QBENCH_FLOOR_ROUNDS", "QBENCH_FLOOR_TRACE", "QBENCH_SOAK_MINUTES",
}

// setSwitches are the switches the environment sets away from their defaults.
func setSwitches(getenv func(string) string) map[string]string {
	set := map[string]string{}
	for name, def := range switches {
		if v := getenv(name); v != "" && v != def {
			set[name] = v
		}
	}
	return set
}

// record is what qbench run adds to every result it writes: the overrides and the switches.
type record struct {
	overrides []string
	env       map[string]string
}

// newRecord reads the switches, says which are set on stderr (unless quiet), and tells a child
// server to be quiet too.
func newRecord(overrides []string, quiet bool) *record {
	r := &record{overrides: overrides, env: setSwitches(os.Getenv)}
	redisq.QuietChild = quiet
	if len(r.env) > 0 && !quiet {
		names := make([]string, 0, len(r.env))
		for n, v := range r.env {
			names = append(names, n+"="+v)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "qbench: behaviour switches set (recorded in the result): %s\n", strings.Join(names, " "))
	}
	return r
}

// stamp adds the overrides and the switches to the result's scenario (as run), where every
// surface that shows the scenario shows them; compare's like-with-like check reads the fields
// themselves, so an override that changed the workload still counts as a difference.
func (r *record) stamp(res *results.Result) {
	if r == nil || res == nil || (len(r.overrides) == 0 && len(r.env) == 0) {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(res.Scenario, &m) != nil || m == nil {
		return
	}
	if len(r.overrides) > 0 {
		m["overrides"], _ = json.Marshal(r.overrides)
	}
	if len(r.env) > 0 {
		m["environment"], _ = json.Marshal(r.env)
	}
	if raw, err := json.Marshal(m); err == nil {
		res.Scenario = raw
	}
}

// switchFlag declares --switch NAME=VALUE on a command that runs engines: each sets one of the
// declared switches for this process and every server it starts, as the variable would, before
// anything reads it (the packages read them on first use). An environment variable may set a
// switch too; the flag wins.
func switchFlag(cmd *cobra.Command) {
	var set []string
	cmd.Flags().StringArrayVar(&set, "switch", nil, "set a behaviour switch, NAME=VALUE (repeatable; NAME is a QBENCH_ variable of the table in the README's Behaviour switches; recorded in the result)")
	pre := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if err := applySwitches(set, os.Setenv); err != nil {
			return usageError{err}
		}
		if pre != nil {
			return pre(c, args)
		}
		return nil
	}
}

// applySwitches sets each NAME=VALUE, refusing a name that is not a declared switch.
func applySwitches(set []string, setenv func(name, value string) error) error {
	for _, kv := range set {
		name, value, ok := strings.Cut(kv, "=")
		if _, known := switches[name]; !ok || !known {
			names := make([]string, 0, len(switches))
			for n := range switches {
				names = append(names, n)
			}
			sort.Strings(names)
			return fmt.Errorf("--switch %q: want NAME=VALUE with NAME one of %s", kv, strings.Join(names, ", "))
		}
		if err := setenv(name, value); err != nil {
			return err
		}
	}
	return nil
}
