package scenarios

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

func TestParseQuickstartFillsDefaults(t *testing.T) {
	sc, err := Load("quickstart.yaml", testChecks)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Engine != "embedded" || sc.Design != "stream" || sc.Producers != 4 || sc.Consumers != 4 ||
		sc.Rate.PerSecond != 5000 || sc.MessageSize.Value != 256 || sc.Duration.D() != 10*time.Second ||
		sc.Warmup.D() != 2*time.Second {
		t.Fatalf("quickstart decoded as %+v", sc)
	}
	if sc.DrainTimeout.D() != DefaultDrainTimeout || sc.Batch != DefaultBatch || sc.Options.(redisOptions).Stream.Count != 100 {
		t.Fatalf("defaults not filled: %+v", sc)
	}
}

func TestParseRateMax(t *testing.T) {
	sc, err := Parse("t.yaml", []byte("name: x\nrate: max\nduration: 1s\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Rate.Max {
		t.Fatalf("rate %v", sc.Rate)
	}
}

// Every bad input names the file, the line and the field.
func TestParseErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown key", "name: x\nrate: 10\nproducer: 3\n", "bad.yaml:3: producer: unknown field"},
		{"unknown nested key", "name: x\nrate: 10\nredis:\n  stream:\n    maxlenn: 5\n", "bad.yaml:5: redis.stream.maxlenn: unknown field"},
		{"wrong type", "name: x\nrate: 10\nproducers: many\n", "bad.yaml:3: producers: cannot unmarshal !!str `many` into int"},
		{"negative rate", "name: x\nrate: -5\n", "bad.yaml:2: rate: must be a positive number"},
		{"rate word", "name: x\nrate: fast\n", "bad.yaml:2: rate: rate must be messages per second or max"},
		{"zero duration", "name: x\nrate: 10\nduration: 0s\n", "bad.yaml:3: duration: must be positive (got 0)"},
		{"warm-up too long", "name: x\nrate: 10\nduration: 2s\nwarmup: 2s\n", "bad.yaml:4: warmup: must be shorter than duration"},
		{"zero rate", "name: x\nrate: 0\n", "bad.yaml:2: rate: must be positive"},
		{"bad duration", "name: x\nrate: 10\nduration: ten\n", "bad.yaml:3: duration: "},
		{"negative producers", "name: x\nrate: 10\nproducers: -3\n", "bad.yaml:3: producers: must be at least 1 (got -3)"},
		{"tiny message", "name: x\nrate: 10\nmessage_size: 8\n", "bad.yaml:3: message_size: must be at least 32"},
		{"bad ack", "name: x\nrate: 10\nredis:\n  stream:\n    ack: sometimes\n", "bad.yaml:5: redis.stream.ack: must be after, before or noack"},
		{"bad fault", "name: x\nrate: 10\nfaults:\n  - at: 1s\n    kind: meteor\n", "bad.yaml:5: faults.0.kind: unknown fault \"meteor\""},
		{"fault key", "name: x\nrate: 10\nfaults:\n  - at: 1s\n    kind: stall\n    lenght: 1s\n", "bad.yaml:6: faults.0.lenght: unknown field"},
		{"missing rate", "name: x\n", "bad.yaml:1: rate: is required"},
		{"duplicate key", "name: x\nrate: 10\nproducers: 2\nproducers: 3\n", "bad.yaml:4: producers: duplicate key: already set on line 3"},
		{"duplicate nested key", "name: x\nrate: 10\nredis:\n  stream:\n    count: 2\n    count: 3\n", "bad.yaml:6: redis.stream.count: duplicate key: already set on line 5"},
		{"empty file", "", "bad.yaml: the file is empty"},
		{"binary", "\x00\x01\xff\xfe", "bad.yaml:1: not a YAML scenario"},
		{"tab", "name: x\nrate: 10\nredis:\n\tstream: {}\n", "bad.yaml:4: found character that cannot start any token (this line has a tab"},
		{"huge rate", "name: x\nrate: 1e26\n", "bad.yaml:2: rate: must be at most 10000000 messages per second"},
		{"huge producers", "name: x\nrate: 10\nproducers: 100000\n", "bad.yaml:3: producers: must be at most 1024"},
		{"huge consumers", "name: x\nrate: 10\nconsumers: 5000\n", "bad.yaml:3: consumers: must be at most 1024"},
		{"huge duration", "name: x\nrate: 10\nduration: 1000h\n", "bad.yaml:3: duration: must be at most 24h"},
		{"huge buffers", "name: x\nrate: 10\nproducers: 100\nbatch: 1000\nmessage_size: 1048576\n", "bad.yaml:4: batch: producers x in_flight x batch x message_size is"},
		{"fault at the end", "name: x\nrate: 10\nduration: 1s\nfaults:\n  - at: 1s\n    kind: stall\n    duration: 1s\n", "faults.0.at: must be before the end of the run, from 0 to less than its duration 1s (got 1s)"},
		{"not a mapping", "- a\n- b\n", "bad.yaml:1: must be a mapping"},
		{"syntax", "name: x\n  rate: [\n", "bad.yaml:"},
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

func TestParseReportsEveryError(t *testing.T) {
	_, err := Parse("bad.yaml", []byte("name: x\nrate: 10\nproducers: -1\nconsumers: -2\n"), testChecks)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("want two errors, got %v", err)
	}
}

func TestEngineChecks(t *testing.T) {
	_, err := Parse("bad.yaml", []byte("name: x\nrate: 10\ndesign: carrier-pigeon\n"), testChecks)
	if err == nil || !strings.Contains(err.Error(), `bad.yaml:3: design: engine embedded has no design "carrier-pigeon"`) {
		t.Fatalf("got %v", err)
	}
}

// Every scenario shipped in the library (manifest.yaml) for an engine this package's stand-ins describe
// (testChecks) decodes. The stand-ins are not the registry: bench's TestShippedScenariosLoad loads
// every shipped file, on every engine, with the real registrations, so a new engine needs no
// stand-in here.
func TestShippedScenariosDecode(t *testing.T) {
	files := shippedScenarioFiles(t)
	checks := shippedChecks()
	decoded := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Engine string         `yaml:"engine"`
			Matrix map[string]any `yaml:"matrix"`
		}
		if err := yaml.Unmarshal(b, &head); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if head.Engine == "" {
			head.Engine = DefaultEngine
		}
		engines := []string{head.Engine}
		for _, axis := range head.Matrix { // a variant axis's engines
			if variants, ok := axis.(map[string]any); ok {
				for _, v := range variants {
					if e, ok := v.(map[string]any)["engine"].(string); ok {
						engines = append(engines, e)
					}
				}
			}
		}
		standIns := true
		for _, e := range engines {
			if _, err := checks.engine(e); err != nil {
				standIns = false
			}
		}
		if !standIns {
			continue // bench's TestShippedScenariosLoad decodes it with the real engines
		}
		decoded++
		if _, err := Load(f, checks); err != nil {
			t.Errorf("%v", err)
		}
	}
	// Most shipped files are on the stand-ins' engines: a filter that skipped them all would
	// check nothing.
	if decoded < len(files)/2 {
		t.Fatalf("decoded %d of %d shipped files", decoded, len(files))
	}
}
