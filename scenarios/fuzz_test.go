package scenarios

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"testing"
)

// FuzzScenarioFile runs whole scenario files, seeded with every shipped one, through Parse: it
// either refuses the file or returns a scenario (and matrix cells) whose every number is finite
// and within its documented bounds (README.md). Run it with
//
//	go test ./scenarios -run '^$' -fuzz FuzzScenarioFile -fuzztime 2m
func FuzzScenarioFile(f *testing.F) {
	for _, file := range shippedScenarioFiles(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// The classes the loader once let through, as starting points for the mutator.
	for _, s := range []string{
		"name: x\nrate: .nan\n", "name: x\nrate: 1e-300\n", "profile:\n  ramp: {from: .nan, to: 10}\n",
		"name: x\nrate: 10\npayload: {content: compressible, ratio: .nan}\n", "name: x\nrate: 10\nproducers: 2.5\n",
		"name: x\nrate: 10\nengine: null\n", "name: x\nrate: 10\n---\nrate: 20\n",
		"name: x\nrate: 10\nfaults:\n  - {at: 1s, kind: stall, duration: 1s}\n  - {at: 1500ms, kind: stall, duration: 1s}\n",
	} {
		f.Add([]byte(s))
	}
	checks := shippedChecks()
	checks.MemoryBudget = 1 << 30 // the same budget on every machine
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse("fuzz.yaml", data, checks)
		if err != nil {
			return
		}
		checkParsed(t, sc, false)
		cells, err := sc.Cells()
		if err != nil {
			t.Fatalf("Parse accepted a scenario whose cells fail: %v", err)
		}
		for _, c := range cells {
			checkParsed(t, c.Scenario, len(sc.Matrix.Axes) > 0)
		}
	})
}

// checkParsed asserts what Parse promises of a scenario it accepts, independently of how
// validation checks it.
func checkParsed(t *testing.T, s *Scenario, cell bool) {
	t.Helper()
	walkFloats(reflect.ValueOf(s).Elem(), "", func(path string, f float64) {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			t.Fatalf("%s is %g", path, f)
		}
	})
	inRate := func(field string, r float64, zeroOK bool) {
		if (r == 0 && zeroOK) || (r >= MinRate && r <= MaxRate) {
			return
		}
		t.Fatalf("%s = %g, outside [%g, %d]", field, r, MinRate, MaxRate)
	}
	if !s.Rate.Max {
		inRate("rate", s.Rate.PerSecond, s.Profile.Set() || !s.Produces())
	}
	p := s.Profile
	if p.IsRamp() {
		inRate("profile.ramp.from", p.Ramp.From, true)
		inRate("profile.ramp.to", p.Ramp.To, true)
	}
	for i, st := range p.Steps {
		inRate(fmt.Sprintf("profile.steps.%d.rate", i), st.Rate, false)
	}
	if p.IsBurst() {
		inRate("profile.burst.base", p.Burst.Base, false)
		inRate("profile.burst.peak", p.Burst.Peak, false)
	}
	if r := s.Payload.Ratio; r != 0 && !(r >= 1 && r <= 64) {
		t.Fatalf("payload.ratio = %g", r)
	}
	z := s.MessageSize
	if z.Dist == "lognormal" && !(z.Sigma > 0 && z.Sigma <= 4) {
		t.Fatalf("message_size.sigma = %g", z.Sigma)
	}
	if l, m := z.Largest(), z.Smallest(); l > 64<<20 || m < MinMessageSize {
		t.Fatalf("message sizes %d to %d", m, l)
	}
	for _, w := range z.Sizes {
		if !(w.Weight >= MinWeight && w.Weight <= MaxWeight) {
			t.Fatalf("weight %g", w.Weight)
		}
	}
	if s.ShardSkew != 0 && !(s.ShardSkew > 1 && s.ShardSkew <= 100) {
		t.Fatalf("shard_skew = %g", s.ShardSkew)
	}
	if s.Producers < 1 || s.Producers > MaxProducers || s.Consumers < 1 || s.Consumers > MaxConsumers {
		t.Fatalf("producers %d, consumers %d", s.Producers, s.Consumers)
	}
	if s.Duration <= 0 || s.Duration > Duration(MaxDuration) || s.Warmup < 0 || s.Warmup >= s.Duration {
		t.Fatalf("duration %s, warm-up %s", s.Duration, s.Warmup)
	}
	if len(s.Faults) > MaxFaults {
		t.Fatalf("%d faults", len(s.Faults))
	}
	for i, f := range s.Faults {
		traits, _ := f.Kind.Traits()
		if end, _ := s.faultEnd(traits); f.At < 0 || f.Duration < 0 || f.At+f.Duration > end {
			t.Fatalf("faults.%d at %s for %s, past %s", i, f.At, f.Duration, end)
		}
		if f.Work != nil && f.Work.Dist == "lognormal" && !(f.Work.Sigma > 0 && f.Work.Sigma <= 5) {
			t.Fatalf("faults.%d.work.sigma = %g", i, f.Work.Sigma)
		}
	}
	if s.Repeat < 0 || s.Repeat > MaxRepeat {
		t.Fatalf("repeat %d", s.Repeat)
	}
	if !cell && !validName(s.Name) { // a cell is named base/cell
		t.Fatalf("name %q", s.Name)
	}
}

// walkFloats calls fn with every float reachable from v (Options included), by field path.
func walkFloats(v reflect.Value, path string, fn func(string, float64)) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		fn(path, v.Float())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkFloats(v.Elem(), path, fn)
		}
	case reflect.Struct:
		if v.Type() == matrixType || v.Type() == nodeType {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walkFloats(v.Field(i), path+"."+v.Type().Field(i).Name, fn)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walkFloats(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			walkFloats(iter.Value(), fmt.Sprintf("%s[%v]", path, iter.Key()), fn)
		}
	}
}
