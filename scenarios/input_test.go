package scenarios

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every number a scenario holds is finite and within its documented bounds, every integer whole,
// every key written has a value and is read: each bad input is refused with file:line:field.
func TestBadInputIsRefused(t *testing.T) {
	const ramp = "profile:\n  ramp: {from: %s, to: %s}\n"
	cases := []struct {
		name, yaml, want string
	}{
		// Non-finite and absurd numbers.
		{"rate nan", "name: x\nrate: .nan\n", "bad.yaml:2: rate: must be a finite number (got NaN)"},
		{"rate inf", "name: x\nrate: .inf\n", "bad.yaml:2: rate: must be a finite number (got +Inf)"},
		{"rate -inf", "name: x\nrate: -.inf\n", "bad.yaml:2: rate: must be a finite number (got -Inf)"},
		{"rate tiny", "name: x\nrate: 1e-300\n", "bad.yaml:2: rate: must be at least 0.001 messages per second"},
		{"ramp from nan", fmt.Sprintf(ramp, ".nan", "100"), "bad.yaml:2: profile.ramp.from: must be a finite number"},
		{"ramp to nan", fmt.Sprintf(ramp, "0", ".nan"), "bad.yaml:2: profile.ramp.to: must be a finite number"},
		{"ramp to tiny", fmt.Sprintf(ramp, "0", "1e-300"), "profile.ramp.to: must be 0 or at least 0.001"},
		{"step tiny", "profile:\n  steps:\n    - {rate: 1e-9, for: 1s}\n", "bad.yaml:3: profile.steps.0.rate: must be at least 0.001"},
		{"burst inf", "profile:\n  burst: {base: .inf, peak: 10, every: 2s, for: 1s}\n", "bad.yaml:2: profile.burst.base: must be a finite number"},
		{"ratio nan", "name: x\nrate: 10\npayload: {content: compressible, ratio: .nan}\n", "bad.yaml:3: payload.ratio: must be a finite number"},
		{"ratio nan on random", "name: x\nrate: 10\npayload: {content: random, ratio: .nan}\n", "bad.yaml:3: payload.ratio: must be a finite number"},
		{"sigma nan", "name: x\nrate: 10\nmessage_size: {dist: lognormal, median: 256, sigma: .nan}\n", "bad.yaml:3: message_size.sigma: must be a finite number"},
		{"lognormal without sigma", "name: x\nrate: 10\nmessage_size: {dist: lognormal, median: 512}\n", "bad.yaml:3: message_size.sigma: a lognormal size needs sigma"},
		{"lognormal huge median", "name: x\nrate: 10\nmessage_size: {dist: lognormal, median: 9000000000000, sigma: 1}\n", "message_size.median: a lognormal size needs a median from 32 bytes to 64 MiB"},
		{"weight inf", "name: x\nrate: 10\nmessage_size: {dist: weighted, sizes: [{size: 64, weight: .inf}]}\n", "bad.yaml:3: message_size.sizes.0.weight: must be a finite number"},
		{"weight tiny", "name: x\nrate: 10\nmessage_size: {dist: weighted, sizes: [{size: 64, weight: 1e-300}]}\n", "message_size.sizes.0.weight: must be a relative weight from 1e-06 to 1e+06"},
		{"shard skew nan", "name: x\nrate: 10\nshards: 2\nshard_routing: zipf\nshard_skew: .nan\n", "bad.yaml:5: shard_skew: must be a finite number"},
		{"work sigma nan", "name: x\nrate: 10\nfaults:\n  - {at: 1s, kind: slow-consumer, duration: 1s, work: {dist: lognormal, median: 1ms, sigma: .nan}}\n", "bad.yaml:4: faults.0.work.sigma: must be a finite number"},
		{"work lognormal without sigma", "name: x\nrate: 10\nfaults:\n  - {at: 1s, kind: slow-consumer, duration: 1s, work: {dist: lognormal, median: 1ms}}\n", "faults.0.work.sigma: a lognormal work time needs sigma above 0"},
		{"huge drain", "name: x\nrate: 10\ndrain_timeout: 1000h\n", "bad.yaml:3: drain_timeout: must be at most 24h0m0s (got 1000h0m0s)"},
		{"huge work", "name: x\nrate: 10\nwork: 100h\n", "bad.yaml:3: work: must be at most 24h0m0s"},
		{"huge block", "name: x\nrate: 10\nredis:\n  stream:\n    block: 48h\n", "bad.yaml:5: redis.stream.block: must be at most 24h0m0s"},
		// Fractions where integers are taken, and nulls.
		{"fractional producers", "name: x\nrate: 10\nproducers: 2.5\n", "bad.yaml:3: producers: must be a whole number (got 2.5)"},
		{"fractional size", "name: x\nrate: 10\nmessage_size: 256.5\n", "bad.yaml:3: message_size: message_size must be a whole number (got 256.5)"},
		{"fractional size min", "name: x\nrate: 10\nmessage_size: {dist: uniform, min: 64.5, max: 100}\n", "bad.yaml:3: message_size: message_size.min must be a whole number (got 64.5)"},
		{"fractional consumer", "name: x\nrate: 10\nconsumers: 2\nfaults:\n  - {at: 1s, kind: consumer-pause, duration: 1s, consumer: 0.5}\n", "bad.yaml:5: faults.0.consumer: must be a whole number (got 0.5)"},
		{"fractional backlog", "name: x\nrate: 10\nbacklog:\n  messages: 10.5\n", "bad.yaml:4: backlog.messages: must be a whole number (got 10.5)"},
		{"fractional matrix value", "name: x\nrate: 10\nmatrix:\n  producers: [1, 2.5]\n", "bad.yaml:4: matrix.producers.1: must be a whole number (got 2.5)"},
		{"engine null", "name: x\nrate: 10\nengine: null\n", "bad.yaml:3: engine: has no value (null)"},
		{"engine empty", "name: x\nrate: 10\nengine:\n", "bad.yaml:3: engine: has no value (null)"},
		{"engine tilde", "name: x\nrate: 10\nengine: ~\n", "bad.yaml:3: engine: has no value (null)"},
		{"nested null", "name: x\nrate: 10\nredis:\n  stream:\n    ack: null\n", "bad.yaml:5: redis.stream.ack: has no value (null)"},
		{"matrix null", "name: x\nrate: 10\nmatrix:\n  engine: [embedded, null]\n", "bad.yaml:4: matrix.engine.1: has no value (null)"},
		{"repeat 0", "name: x\nrate: 10\nrepeat: 0\n", "bad.yaml:3: repeat: must be positive (got 0)"},
		// Faults: past the end, keys their kind does not read, too many.
		{"stall past the end", "name: x\nrate: 10\nduration: 10s\nfaults:\n  - {at: 8s, kind: stall, duration: 5s}\n",
			"bad.yaml:5: faults.0.duration: a stall at 8s for 5s ends at 13s, after the end of the run (duration) at 10s; shorten it to at most 2s"},
		{"pause past the drain", "name: x\nrate: 10\nduration: 10s\ndrain_timeout: 5s\nfaults:\n  - {at: 8s, kind: consumer-pause, duration: 8s}\n",
			"faults.0.duration: a consumer-pause at 8s for 8s ends at 16s, after the end of the drain (duration + drain_timeout) at 15s"},
		{"restart past the drain", "name: x\nrate: 10\nduration: 10s\nfaults:\n  - {at: 8s, kind: consumer-crash, restart_after: 1h}\n",
			"faults.0.restart_after: the consumer would come back at 1h0m8s, after the end of the drain"},
		{"consumer on a stall", "name: x\nrate: 10\nfaults:\n  - at: 1s\n    kind: stall\n    duration: 1s\n    consumer: 0\n",
			"bad.yaml:7: faults.0.consumer: a stall does not take consumer (only consumer faults (slow-consumer, consumer-crash, consumer-pause, subscriber-offline) do)"},
		{"work on a stall", "name: x\nrate: 10\nfaults:\n  - {at: 1s, kind: stall, duration: 1s, work: {dist: fixed, value: 1ms}}\n", "bad.yaml:4: faults.0.work: a stall does not take work (only slow-consumer do)"},
		{"point on a pause", "name: x\nrate: 10\nfaults:\n  - {at: 1s, kind: consumer-pause, duration: 1s, point: before-work}\n", "faults.0.point: a consumer-pause does not take point"},
		{"command on a stall", "name: x\nrate: 10\nfaults:\n  - {at: 1s, kind: stall, duration: 1s, command: [BGSAVE]}\n", "faults.0.command: a stall does not take command"},
		{"io-error without a point", "name: x\nrate: 10\nfaults:\n  - {at: 1s, kind: io-error, duration: 1s}\n",
			"faults.0.point: an io-error needs point: write (writes fail with EIO) or fsync (fsyncs fail with EIO) (got \"\")"},
		{"io-error at a bad point", "name: x\nrate: 10\nfaults:\n  - {at: 1s, kind: io-error, duration: 1s, point: read}\n", "faults.0.point: an io-error needs point: write"},
		{"restart_after on a stall", "name: x\nrate: 10\nfaults:\n  - {at: 1s, kind: stall, duration: 1s, restart_after: 1s}\n",
			"faults.0.restart_after: a stall does not take restart_after (only consumer-crash, disk-full, io-error do)"},
		{"restart past the end", "name: x\nrate: 10\nduration: 10s\nfaults:\n  - {at: 8s, kind: disk-full, duration: 1s, restart_after: 2s}\n",
			"faults.0.restart_after: a server that died of it would be restarted at 11s, after the end of the run (duration) at 10s; at most 1s"},
		{"restart_after negative", "name: x\nrate: 10\nfaults:\n  - {at: 1s, kind: io-error, point: fsync, duration: 1s, restart_after: -1s}\n",
			"faults.0.restart_after: must not be negative"},
		{"a fault during a restart", "name: x\nrate: 10\nduration: 10s\nfaults:\n  - {at: 1s, kind: disk-full, duration: 1s, restart_after: 1s}\n  - {at: 2500ms, kind: stall, duration: 1s}\n",
			"faults.1.at: stall at 2.5s overlaps faults.0 (disk-full at 1s for 1s)"},
		{"too many faults", "name: x\nrate: 10\nduration: 24h\nfaults:\n" + strings.Repeat("  - {at: 1s, kind: consumer-pause, duration: 1ms}\n", MaxFaults+1),
			"bad.yaml:4: faults: must be at most 10000 faults in one scenario (got 10001)"},
		// Sweeps whose cells would write one file.
		{"repeated sweep value", "name: x\nmatrix:\n  rate: [100, 200, 100]\n", "bad.yaml:3: matrix.rate.2: repeats the value 100 of matrix.rate.0"},
		// The file itself.
		{"second document", "name: x\nrate: 10\n---\nrate: 20\n", "bad.yaml:3: a second YAML document starts here"},
		{"empty second document", "name: x\nrate: 10\n---\n", "bad.yaml:3: a second YAML document starts here"},
		{"broken second document", "name: x\nrate: 10\n# more\n---\n[\n", "bad.yaml:4: a second YAML document starts here"},
		{"too large", "name: x\nrate: 10\n#" + strings.Repeat("x", MaxFileBytes), "bad.yaml: the file is larger than a scenario can be, 1048576 bytes"},
		// Names.
		{"name injects yaml", "name: \"orders\\n---\\nkind: ClusterRoleBinding\"\nrate: 10\n", "bad.yaml:1: name: must be 1 to 100 characters from A-Z a-z 0-9 - _ . and space"},
		{"name with a slash", "name: a/b\nrate: 10\n", "bad.yaml:1: name: must be"},
		{"name dot dot", "name: ..\nrate: 10\n", "bad.yaml:1: name: must be"},
		{"name markup", "name: \"<b>x</b>\"\nrate: 10\n", "bad.yaml:1: name: must be"},
		{"name too long", "name: " + strings.Repeat("a", MaxNameLen+1) + "\nrate: 10\n", "bad.yaml:1: name: must be"},
		{"name trailing space", "name: \"a \"\nrate: 10\n", "bad.yaml:1: name: must be"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(c.yaml), testChecks)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// The bounds are not stricter than they say: the values at them pass.
func TestInputAtTheBoundsIsAccepted(t *testing.T) {
	cases := []struct{ name, yaml string }{
		{"lowest rate", "name: x\nrate: 0.001\n"},
		{"ramp from 0", "profile:\n  ramp: {from: 0, to: 0.001}\n"},
		{"whole float", "name: x\nrate: 10\nproducers: 1e1\n"},
		{"name charset", "name: Orders v2.1_a-b\nrate: 10\n"},
		{"leading document marker", "---\nname: x\nrate: 10\n"},
		{"document end marker", "name: x\nrate: 10\n...\n"},
		{"fault to the end", "name: x\nrate: 10\nduration: 10s\nfaults:\n  - {at: 8s, kind: stall, duration: 2s}\n"},
		{"consumer fault into the drain", "name: x\nrate: 10\nduration: 10s\nfaults:\n  - {at: 8s, kind: consumer-pause, duration: 4s, consumer: 0}\n"},
		{"most faults", "name: x\nrate: 10\nduration: 24h\nfaults:\n" + strings.Repeat("  - {at: 1s, kind: consumer-pause, duration: 1ms}\n", MaxFaults)},
		{"lognormal with sigma", "name: x\nrate: 10\nmessage_size: {dist: lognormal, median: 512, sigma: 1}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Parse("ok.yaml", []byte(c.yaml), testChecks); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The name defaults to the file name, made valid: characters outside the set become '_'.
func TestNameFromFileName(t *testing.T) {
	for file, want := range map[string]string{
		"dir/my run (2).yaml":        "my run _2_",
		"Test/{messages: 1500}.yaml": "messages_ 1500_",
		"dir/((( ))).yaml":           "scenario",
	} {
		sc, err := Parse(file, []byte("rate: 10\n"), testChecks)
		if err != nil || sc.Name != want {
			t.Errorf("%s: name %q, %v; want %q", file, sc.Name, err, want)
		}
	}
	sc, err := Parse("dir/my-run 2.yaml", []byte("rate: 10\n"), testChecks)
	if err != nil || sc.Name != "my-run 2" {
		t.Fatalf("got %v, %v", sc, err)
	}
}

// Load refuses a file over MaxFileBytes from its size, before reading it whole.
func TestLoadRefusesALargeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 100 MB of size, no data written, so a reader that reads it whole is slow and large.
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Load(path, testChecks)
	if err == nil || !strings.Contains(err.Error(), "big.yaml: the file is larger than a scenario can be, 1048576 bytes (got 104857600 bytes)") {
		t.Fatalf("got %v", err)
	}
}

// Fault validation is linear in the number of faults (sorted by start, one pass): 50,000 faults,
// which the pairwise check took minutes over, take milliseconds. The bound is loose for a busy
// machine; the old check's time was about 1000 times it.
func TestFaultOverlapIsLinear(t *testing.T) {
	s := &Scenario{}
	for i := range 50_000 {
		s.Faults = append(s.Faults, Fault{At: Duration(time.Duration(i) * time.Second), Kind: FaultStall, Duration: Duration(500 * time.Millisecond)})
	}
	// One overlap, at the end, found by the pass.
	s.Faults = append(s.Faults, Fault{At: Duration(49_999*time.Second + 100*time.Millisecond), Kind: FaultStall, Duration: Duration(time.Millisecond)})
	start := time.Now()
	errs := s.validateFaultOverlap()
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("overlap check of %d faults took %s", len(s.Faults), el)
	}
	if len(errs) != 1 || errs[0].Field != "faults.50000.at" || errs[0].See != "faults.49999" {
		t.Fatalf("errors %v", errs)
	}
}

// checkNumbers reaches every float of the schema: a NaN in each one is reported under its field
// path. A float field added to the schema without a path here fails this test.
func TestEveryFloatIsChecked(t *testing.T) {
	floats := floatPaths(reflect.TypeOf(Scenario{}), "")
	s := &Scenario{
		Profile:     Profile{Steps: []Step{{}}},
		MessageSize: Size{Sizes: []WeightedSize{{}}},
		Faults:      []Fault{{Work: &WorkDist{}}},
	}
	setFloats(reflect.ValueOf(s).Elem(), math.NaN())
	var got []string
	checkNumbers(reflect.ValueOf(s).Elem(), "", func(field, format string, args ...any) { got = append(got, field) })
	want := []string{"shard_skew", "rate", "profile.ramp.from", "profile.ramp.to", "profile.steps.0.rate", "profile.burst.base", "profile.burst.peak",
		"message_size.sigma", "message_size.sizes.0.weight", "payload.ratio", "faults.0.work.sigma"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("reported %v\nwant %v", got, want)
	}
	if len(floats) != len(want) {
		t.Errorf("the schema has %d float fields %v; the test knows %d", len(floats), floats, len(want))
	}
}

func floatPaths(t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Float64, reflect.Float32:
		return []string{path}
	case reflect.Struct:
		if t == matrixType || t == nodeType {
			return nil
		}
		var out []string
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() {
				out = append(out, floatPaths(f.Type, path+"."+f.Name)...)
			}
		}
		return out
	}
	return nil
}

func setFloats(v reflect.Value, f float64) {
	switch v.Kind() {
	case reflect.Float64:
		v.SetFloat(f)
	case reflect.Pointer:
		if !v.IsNil() {
			setFloats(v.Elem(), f)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			setFloats(v.Index(i), f)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && v.Field(i).CanSet() {
				setFloats(v.Field(i), f)
			}
		}
	}
}

// An engine's own section is held to the same rule: its numbers are finite.
func TestEngineSectionNumbersAreFinite(t *testing.T) {
	_, err := Parse("bad.yaml", []byte("name: x\nengine: kafka\nrate: 10\nkafka:\n  acks: all\n  linger_ratio: .nan\n"), shippedChecks())
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:6: kafka.linger_ratio: must be a finite number (got NaN)") {
		t.Fatalf("got %v", err)
	}
}
