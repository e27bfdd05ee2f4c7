package server

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"qbench/engines/server/fsys"
)

// The randomized crash harness (on top of crash_test.go's writers and checks): every trial
// draws a policy, a crash (process crash in process, power cut, or SIGKILL of a child process
// on real files), 1 to 50 writers, pipelined or not, RPUSH or XADD, with or without
// BGREWRITEAOF running meanwhile; and, in TestCrashHarnessFaults, an injected write or fsync
// error with Linux's semantics. 20 trials each by default; QBENCH_SOAK=1 runs 200.

// harnessSeed is QBENCH_SEED if set (to replay a failed run), else the clock; it is logged.
func harnessSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("QBENCH_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	t.Logf("seed %d (QBENCH_SEED=%d replays this run's draws)", seed, seed)
	return seed
}

func harnessTrials() int {
	if os.Getenv("QBENCH_SOAK") == "1" {
		return 200
	}
	return 20
}

// randomLoad draws the writers' behaviour for one trial.
func randomLoad(rng *rand.Rand) load {
	ld := load{writers: 1 + rng.IntN(50), pipeline: 1, xadd: rng.IntN(4) == 0, rewrites: rng.IntN(2) == 0}
	if rng.IntN(2) == 0 {
		ld.pipeline = 2 + rng.IntN(7)
	}
	return ld
}

// harnessRow accumulates the trials of one (policy, crash, fault) cell.
type harnessRow struct {
	trials, acked, lost, refused int
	maxAge                       time.Duration
}

// harnessRows are the table's cells by (policy / crash / fault).
type harnessRows map[string]*harnessRow

// add counts trial r in cell key.
func (rows harnessRows) add(key string, r trialResult) {
	row := rows[key]
	if row == nil {
		row = &harnessRow{}
		rows[key] = row
	}
	row.trials++
	row.acked += r.acked
	row.lost += r.lost
	row.refused += r.refused
	row.maxAge = max(row.maxAge, r.maxAge)
}

func logHarnessTable(t *testing.T, rows harnessRows) {
	var keys []string
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("\n| policy / crash / fault | trials | acked checked | lost | refused | max age lost |\n")
	for _, k := range keys {
		r := rows[k]
		fmt.Fprintf(&b, "| %-34s | %3d | %9d | %4d | %6d | %9v |\n", k, r.trials, r.acked, r.lost, r.refused, r.maxAge.Round(time.Millisecond))
	}
	t.Log(b.String())
}

// checkTrial asserts the policy's promise for one trial: nothing acknowledged is lost under
// always, nor on any process crash; under everysec a power cut loses only writes acknowledged
// within two periods (or two of the longest tick gaps the server saw).
func checkTrial(t *testing.T, i int, policy string, power bool, interval time.Duration, desc string, r trialResult) {
	t.Helper()
	if r.wrongErr != "" {
		t.Fatalf("trial %d (%s): %s", i, desc, r.wrongErr)
	}
	switch {
	case policy == "always" || !power:
		if r.lost != 0 {
			t.Errorf("trial %d (%s): %d acknowledged writes lost, want 0", i, desc, r.lost)
		}
	case policy == "everysec":
		if r.lost > 0 && r.maxAge > 2*max(interval, r.tickGap)+10*time.Millisecond {
			t.Errorf("trial %d (%s): lost a write acknowledged %v before the cut; want <= 2 x max(%v, tick gap %v)", i, desc, r.maxAge, interval, r.tickGap)
		}
	}
}

// TestCrashHarness: randomized kill -9 / crash / power-cut trials under load and rewrites.
func TestCrashHarness(t *testing.T) {
	const interval = 50 * time.Millisecond
	rng := rand.New(rand.NewPCG(harnessSeed(t), 11))
	rows := harnessRows{}
	for i := 0; i < harnessTrials(); i++ {
		policy := []string{"always", "everysec", "no"}[rng.IntN(3)]
		crash := []string{"process", "power", "sigkill"}[rng.IntN(3)]
		ld := randomLoad(rng)
		desc := fmt.Sprintf("%s/%s, %d writers, pipeline %d, xadd %v, rewrites %v", policy, crash, ld.writers, ld.pipeline, ld.xadd, ld.rewrites)
		var r trialResult
		if crash == "sigkill" {
			ld.xadd = false
			r = childTrial(t, policy, ld, rng, uint64(i))
		} else {
			r = runInProcess(t, trialOpts{policy: policy, power: crash == "power", interval: interval,
				runFor: time.Duration(5+rng.IntN(70)) * time.Millisecond, load: ld}, rng, uint64(i))
		}
		checkTrial(t, i, policy, crash == "power", interval, desc, r)
		rows.add(policy+" / "+crash, r)
	}
	logHarnessTable(t, rows)
}

// TestCrashHarnessFaults: the same trials on the simulated file system with an injected I/O
// error (Linux semantics: a failed fsync drops the dirty pages and the next one returns 0). No
// acknowledged write may be lost beyond the policy's promise, the restart must succeed (no
// dropped pages inside the log), and a server that saw the error must have exited (always) or
// logged it and refused writes until it was repaired (everysec, no).
func TestCrashHarnessFaults(t *testing.T) {
	const interval = 50 * time.Millisecond
	rng := rand.New(rand.NewPCG(harnessSeed(t), 12))
	rows := harnessRows{}
	faults := []string{"fsync-once", "fsync-fail", "write-fail", "enospc"}
	for i := 0; i < harnessTrials(); i++ {
		policy := []string{"always", "everysec", "no"}[rng.IntN(3)]
		power := rng.IntN(2) == 0
		fault := faults[rng.IntN(len(faults))]
		ld := randomLoad(rng)
		crash := "process"
		if power {
			crash = "power"
		}
		desc := fmt.Sprintf("%s/%s/%s, %d writers, pipeline %d, xadd %v, rewrites %v", policy, crash, fault, ld.writers, ld.pipeline, ld.xadd, ld.rewrites)
		r := runInProcess(t, trialOpts{policy: policy, power: power, interval: interval,
			runFor: time.Duration(10+rng.IntN(90)) * time.Millisecond, load: ld, fault: fault}, rng, uint64(i))
		checkTrial(t, i, policy, power, interval, desc, r)
		rows.add(policy+" / "+crash+" / "+fault, r)
	}
	logHarnessTable(t, rows)
}

// injectFault starts an I/O error on sim: one failed fsync (fsync-once, the fsyncgate case),
// failing fsyncs or writes (EIO) for up to 20 ms, or a disk that fills up (enospc).
func injectFault(sim *fsys.Sim, kind string, rng *rand.Rand) {
	lasts := time.Duration(rng.IntN(20)) * time.Millisecond
	switch kind {
	case "fsync-once":
		sim.FailSyncOnce(syscall.EIO)
		return
	case "fsync-fail":
		sim.FailSyncs(syscall.EIO)
		time.AfterFunc(lasts, func() { sim.FailSyncs(nil) })
	case "write-fail":
		sim.FailWrites(syscall.EIO)
		time.AfterFunc(lasts, func() { sim.FailWrites(nil) })
	case "enospc":
		sim.SetSpace(int64(rng.IntN(200)))
		time.AfterFunc(lasts, func() { sim.SetSpace(-1) })
	}
}

// clearFaults makes the disk healthy again (before the restart).
func clearFaults(sim *fsys.Sim) {
	sim.FailSyncs(nil)
	sim.FailSyncOnce(nil)
	sim.FailWrites(nil)
	sim.SetSpace(-1)
}

// checkFaultHandled: if the log writer saw an error, the server exited (always) or logged the
// error (everysec, no; writes are refused meanwhile, which TestWriteErrorsAreSticky checks).
func checkFaultHandled(s *Server, sim *fsys.Sim, policy, logs string, refused int) string {
	if s.p.w == nil || s.p.w.Stats().Errors == 0 {
		return ""
	}
	if policy == "always" {
		if s.Err() == nil || !strings.Contains(logs, "Exiting...") {
			return fmt.Sprintf("the log writer failed under always but the server did not exit (Err %v); log:\n%s", s.Err(), logs)
		}
		return ""
	}
	if !strings.Contains(logs, "Fail to fsync the AOF file") && !strings.Contains(logs, "Error writing to the AOF file") {
		return "the log writer failed but nothing was logged:\n" + logs
	}
	return ""
}

// childTrial SIGKILLs a real server process under load ld at a random moment and restarts
// it on its files.
func childTrial(t *testing.T, policy string, ld load, rng *rand.Rand, seed uint64) trialResult {
	dir := t.TempDir()
	c := startChild(t, dir, policy)
	done := make(chan [][]ack)
	go func() { a, _ := writeUntilDead(c.addr, seed, ld); done <- a }()
	time.Sleep(time.Duration(5+rng.IntN(70)) * time.Millisecond)
	crashAt := time.Now()
	c.kill()
	acks := <-done
	c2 := startChild(t, dir, policy)
	defer c2.kill()
	return countLost(c2.addr, acks, nil, crashAt, false)
}
