package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"qbench/bench"
)

// --version and version: the version results record, and the build's Go and dependencies.
func TestVersion(t *testing.T) {
	stdout, stderr, code := qbench(t, "--version")
	if code != 0 || stdout != "qbench "+bench.Version+"\n" {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, stderr, code = qbench(t, "version")
	if code != 0 {
		t.Fatalf("version: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"qbench " + bench.Version + "\n", "go     go1.", "dep    github.com/spf13/cobra v", "dep    github.com/redis/go-redis/v9 v"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("version lacks %q:\n%s", want, stdout)
		}
	}
}

// Shell completion is cobra's, and stays enabled.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		stdout, stderr, code := qbench(t, "completion", shell)
		if code != 0 || !strings.Contains(stdout, "qbench") {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", shell, code, len(stdout), stderr)
		}
	}
}

// A missing argument prints the command's usage, not only cobra's count.
func TestMissingArgumentPrintsUsage(t *testing.T) {
	for _, c := range []struct{ args []string }{{[]string{"run"}}, {[]string{"compare", "a.json"}}, {[]string{"validate"}}} {
		_, stderr, code := qbench(t, c.args...)
		if code != 2 || !strings.Contains(stderr, "Usage:\n  qbench "+c.args[0]+" ") {
			t.Errorf("%v: exit %d, stderr:\n%s", c.args, code, stderr)
		}
	}
}

// run --help lists the exit codes.
func TestRunHelpListsExitCodes(t *testing.T) {
	stdout, _, code := qbench(t, "run", "--help")
	for _, want := range []string{"Exit codes: 0 ok; 1 runtime error; 2 bad usage", "3 a regression gate failed", "4 interrupted", "5 a gate was inconclusive", "--set stringArray"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("run --help (exit %d) lacks %q", code, want)
		}
	}
}

// --memory-budget is on the commands that check a schedule, and on no other.
func TestMemoryBudgetOnlyWhereItMeansSomething(t *testing.T) {
	root := newRoot()
	for _, c := range root.Commands() {
		want := map[string]bool{"run": true, "validate": true, "search": true, "calibrate": true}[c.Name()]
		if got := c.Flags().Lookup("memory-budget") != nil; got != want {
			t.Errorf("qbench %s: --memory-budget present %v, want %v", c.Name(), got, want)
		}
	}
	if root.PersistentFlags().Lookup("memory-budget") != nil {
		t.Error("--memory-budget is global")
	}
}

// --duration, --rate and --set change the scenario before it is validated, and the result
// records the scenario they produced, the overrides, and the behaviour switches set.
func TestRunOverridesAreRecorded(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(sc, []byte("engine: embedded\nrate: 50000\nduration: 1h\nredis:\n  stream:\n    count: 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	// stream.count is the old path of redis.stream.count: read as that, with a warning.
	cmd := exec.Command(qbenchBin, "run", sc, "-q", "--duration", "300ms", "--rate", "500", "--set", "stream.count=7", "--set", "producers=2", "-o", out)
	cmd.Env = append(os.Environ(), "QBENCH_CONSUMER_OSYIELD=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Scenario struct {
			Duration  string          `json:"duration"`
			Rate      json.RawMessage `json:"rate"`
			Producers int             `json:"producers"`
			Redis     struct {
				Stream struct{ Count int } `json:"stream"`
			} `json:"redis"`
			Overrides   []string          `json:"overrides"`
			Environment map[string]string `json:"environment"`
		} `json:"scenario"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	s := res.Scenario
	if s.Duration != "300ms" || strings.Trim(string(s.Rate), `"`) != "500" || s.Producers != 2 || s.Redis.Stream.Count != 7 {
		t.Errorf("scenario as run: duration %q rate %s producers %d redis.stream.count %d", s.Duration, s.Rate, s.Producers, s.Redis.Stream.Count)
	}
	if want := "warning: --set stream.count=7: deprecated: stream.count is now redis.stream.count"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	if want := "duration=300ms rate=500 stream.count=7 producers=2"; strings.Join(s.Overrides, " ") != want {
		t.Errorf("overrides %q, want %q", s.Overrides, want)
	}
	if s.Environment["QBENCH_CONSUMER_OSYIELD"] != "1" {
		t.Errorf("environment %v lacks QBENCH_CONSUMER_OSYIELD=1", s.Environment)
	}
	if strings.Contains(stderr.String(), "wrote") {
		t.Errorf("-q still printed: %s", stderr.String())
	}
	// Without -q the switch is announced.
	cmd = exec.Command(qbenchBin, "run", sc, "--duration", "200ms", "--rate", "100")
	cmd.Env = append(os.Environ(), "QBENCH_CONSUMER_OSYIELD=1")
	stderr.Reset()
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stderr.String(), "behaviour switches set (recorded in the result): QBENCH_CONSUMER_OSYIELD=1") {
		t.Errorf("%v; stderr lacks the switch:\n%s", err, stderr.String())
	}
	// report's default output: report.html beside its input.
	if _, stderr, code := qbench(t, "report", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Error(err)
	}
}

// An override is checked as the file's own value would be; errors name the override, and the
// file's own errors keep their lines.
func TestRunOverrideErrors(t *testing.T) {
	sc := writeFile(t, "s.yaml", "engine: nullq\nrate: 100\nduration: 1s\nfaults:\n  - {at: 100ms, kind: consumer-pause, consumer: 0, duration: 100ms}\n")
	bad := writeFile(t, "b.yaml", "engine: nullq\nrate: 100\nproducers: -1\n")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown path", []string{sc, "--set", "strem.count=1"}, "s.yaml: strem (--set strem.count=1): unknown field (known: "},
		{"unknown nested path", []string{sc, "--set", "nullq.capcity=1"}, "s.yaml: nullq.capcity (--set nullq.capcity=1): unknown field"},
		{"a Redis option's old path on nullq", []string{sc, "--set", "stream.cnt=1"}, "s.yaml: stream (--set stream.cnt=1): engine nullq does not read stream: it is now redis.stream"},
		{"bad duration", []string{sc, "--duration", "soon"}, "s.yaml: duration (--set duration=soon): "},
		{"bad rate", []string{sc, "--rate", "-5"}, "(--set rate=-5)"},
		{"no equals sign", []string{sc, "--set", "rate"}, `--set "rate": want path=value`},
		{"into a value", []string{sc, "--set", "rate.x=1"}, "--set rate.x=1: rate is a single value, not a mapping"},
		{"list index out of range", []string{sc, "--set", "faults.3.at=1s"}, `--set faults.3.at=1s: faults is a list of 1: "3" is not one of its indices`},
		{"the file's own error keeps its line", []string{bad, "--duration", "1s"}, "b.yaml:3: producers: must be at least 1"},
	} {
		for _, command := range []string{"run", "validate"} {
			t.Run(command+" "+c.name, func(t *testing.T) {
				_, stderr, code := qbench(t, append([]string{command}, c.args...)...)
				if code != 2 || !strings.Contains(stderr, c.want) {
					t.Errorf("exit %d, want 2; stderr lacks %q:\n%s", code, c.want, stderr)
				}
			})
		}
	}
	if _, stderr, code := qbench(t, "validate", sc, "--duration", "2s", "--set", "faults.0.at=1s"); code != 0 {
		t.Errorf("validate with good overrides: exit %d: %s", code, stderr)
	}
}

// Every QBENCH_ variable in the source is declared: a behaviour switch (recorded when set) or
// one that changes no measurement.
func TestEveryQBenchVariableIsDeclared(t *testing.T) {
	declared := map[string]bool{}
	for n := range switches {
		declared[n] = true
	}
	for _, n := range notSwitches {
		declared[n] = true
	}
	found := map[string]string{}
	err := filepath.WalkDir(repoRoot(t), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range qbenchVar.FindAllString(string(data), -1) {
			found[m] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for n, path := range found {
		if !declared[n] {
			t.Errorf("%s (in %s) is neither in switches nor in notSwitches (cmd/qbench/switches.go)", n, path)
		}
	}
}

// -q means quiet: the in-repo server's child says nothing about starting, and qbench nothing
// about what it wrote; without -q the child's start-up notice is there.
func TestQuietSilencesTheChildServer(t *testing.T) {
	// A crash under appendonly: the restarted child also reports loading its log.
	sc := writeFile(t, "s.yaml", "engine: server\nrate: 100\nduration: 1s\npolicy: aof-everysec\nfaults:\n  - {at: 300ms, kind: server-crash, duration: 100ms}\n")
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code := qbench(t, "run", sc, "-q", "-o", out)
	if code != 0 || strings.Contains(stderr, "listening") || strings.Contains(stderr, "DB loaded") || strings.Contains(stderr, "wrote") {
		t.Errorf("-q: exit %d, stderr:\n%s", code, stderr)
	}
	_, stderr, code = qbench(t, "run", sc, "-o", out)
	if code != 0 || !strings.Contains(stderr, "listening on") {
		t.Errorf("without -q: exit %d, stderr lacks the child's notice:\n%s", code, stderr)
	}
}

// --switch sets a declared switch as its variable would, is recorded in the result like one, and
// refuses a name that is not declared (exit 2).
func TestSwitchFlag(t *testing.T) {
	dir := t.TempDir()
	out := dir + "/r.json"
	_, stderr, code := qbench(t, "run", "-q", "--duration", "3s", "--rate", "200", "--switch", "QBENCH_CONSUMER_OSYIELD=1", "-o", out, "../../scenarios/quickstart.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Scenario struct {
			Environment map[string]string `json:"environment"`
		} `json:"scenario"`
	}
	if err := json.Unmarshal(b, &res); err != nil || res.Scenario.Environment["QBENCH_CONSUMER_OSYIELD"] != "1" {
		t.Errorf("result records switches %v (%v), want QBENCH_CONSUMER_OSYIELD=1", res.Scenario.Environment, err)
	}
	unknown := "QBENCH_" + "NO_SUCH_SWITCH=1" // not a literal: no variable of that name exists
	_, stderr, code = qbench(t, "run", "--switch", unknown, "../../scenarios/quickstart.yaml")
	if code != 2 || !strings.Contains(stderr, `--switch "`+unknown+`": want NAME=VALUE with NAME one of`) {
		t.Errorf("unknown switch: exit %d, stderr %q", code, stderr)
	}
	if err := applySwitches([]string{"QBENCH_REDIS_SPIN"}, func(string, string) error { return nil }); err == nil {
		t.Error("a switch without =VALUE was accepted")
	}
}
