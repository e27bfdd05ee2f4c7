package results_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"qbench/results"
	"qbench/results/resultstest"
)

// Every field of the structs Merge builds has a rule (merged, or left out with a reason), and no
// rule names a field that is gone: a field added later fails here until its merge is decided.
func TestMergeRulesNameEveryField(t *testing.T) {
	for _, c := range []struct {
		typ   reflect.Type
		rules []string
	}{
		{reflect.TypeFor[results.Result](), results.MergeRuleFields("result")},
		{reflect.TypeFor[results.Summary](), results.MergeRuleFields("summary")},
		{reflect.TypeFor[results.Interval](), results.MergeRuleFields("interval")},
		{reflect.TypeFor[results.FaultWindow](), results.MergeRuleFields("fault")},
	} {
		fields := map[string]bool{}
		for i := range c.typ.NumField() {
			fields[c.typ.Field(i).Name] = true
		}
		ruled := map[string]bool{}
		for _, f := range c.rules {
			ruled[f] = true
			if !fields[f] {
				t.Errorf("%s has no field %s, but mergefields.go gives it a rule", c.typ.Name(), f)
			}
		}
		for f := range fields {
			if !ruled[f] {
				t.Errorf("%s.%s has no merge rule: say in mergefields.go how Merge merges it, or why it is per run", c.typ.Name(), f)
			}
		}
	}
}

// Two results with every field set merge to a result in which every field whose rule says it is
// merged is set, and every field said to be per run is not: a rule cannot claim what Merge does
// not do.
func TestMergeKeepsEveryMergedField(t *testing.T) {
	for _, mode := range []results.MergeMode{results.MergeMachines, results.MergeRepetitions} {
		t.Run(string(mode), func(t *testing.T) {
			a, b := filledResult(t, 1), filledResult(t, 2)
			m, err := results.Merge([]*results.Result{a, b}, results.MergeOptions{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			check := func(where string, v reflect.Value, rule func(string) (string, bool)) {
				for i := range v.NumField() {
					name := v.Type().Field(i).Name
					r, ok := rule(name)
					if !ok {
						continue // TestMergeRulesNameEveryField says so
					}
					dropped := strings.HasPrefix(r, "per run:")
					if zero := v.Field(i).IsZero(); zero != dropped {
						t.Errorf("merged %s.%s: zero %v, but its rule says %q", where, name, zero, r)
					}
				}
			}
			check("Result", reflect.ValueOf(*m), func(f string) (string, bool) { return results.MergeRule("result", f, mode) })
			check("Summary", reflect.ValueOf(m.Summary), func(f string) (string, bool) { return results.MergeRule("summary", f, mode) })
			if mode == results.MergeMachines {
				check("Interval", reflect.ValueOf(m.Series[3]), func(f string) (string, bool) { return results.MergeRule("interval", f, mode) })
			}
			if len(m.Faults) != 1 {
				t.Fatalf("merged %d fault windows, want the one fault aligned", len(m.Faults))
			}
			check("FaultWindow", reflect.ValueOf(m.Faults[0]), func(f string) (string, bool) { return results.MergeRule("fault", f, mode) })
			// The nested shares merge every field they have.
			if len(m.Summary.PerConsumer) != 1 || len(m.Summary.PerShard) != 1 || m.Summary.Backlog == nil {
				t.Fatalf("merged %d consumers, %d shards (want 1 each), backlog %v", len(m.Summary.PerConsumer), len(m.Summary.PerShard), m.Summary.Backlog)
			}
			for where, v := range map[string]any{"PerConsumer": m.Summary.PerConsumer[0], "PerShard": m.Summary.PerShard[0], "Backlog": *m.Summary.Backlog, "Generator": m.Summary.Generator} {
				rv := reflect.ValueOf(v)
				for i := range rv.NumField() {
					if rv.Field(i).IsZero() {
						t.Errorf("merged Summary.%s.%s is zero", where, rv.Type().Field(i).Name)
					}
				}
			}
			// The counts add.
			f := m.Faults[0]
			if want := a.Faults[0].Lost + b.Faults[0].Lost; f.Lost != want || f.ProduceErrors != a.Faults[0].ProduceErrors+b.Faults[0].ProduceErrors {
				t.Errorf("merged fault lost %d produce errors %d, want the sums", f.Lost, f.ProduceErrors)
			}
			if got, want := m.Summary.PerConsumer[0].Deliveries, a.Summary.PerConsumer[0].Deliveries+b.Summary.PerConsumer[0].Deliveries; got != want {
				t.Errorf("merged consumer 0 deliveries %d, want %d", got, want)
			}
			if got, want := m.Summary.Unsent, a.Summary.Unsent+b.Summary.Unsent; got != want {
				t.Errorf("merged unsent %d, want %d", got, want)
			}
			if mode == results.MergeRepetitions {
				if len(m.Repetitions) != 2 || len(m.Repetitions[0].Faults) == 0 {
					t.Errorf("repetitions %d (want each result's own), first with %d faults", len(m.Repetitions), len(m.Repetitions[0].Faults))
				}
			}
		})
	}
}

// filledResult is a fixture with every field of the result set to something that is not zero
// (a valid histogram where one is decoded).
func filledResult(t *testing.T, seed uint64) *results.Result {
	t.Helper()
	r := resultstest.Make(resultstest.Options{Seed: seed, Seconds: 5, Warmup: 1, Lost: 3, Duplicates: 2})
	h := results.NewHistogram()
	_ = h.RecordValue(1000)
	enc, err := results.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	fill(reflect.ValueOf(r).Elem(), int64(seed), enc)
	r.Summary.Knee.Objective = "produce.p99 <= 5ms"
	r.Faults[0].Kind = "consumer-crash"
	r.Summary.PerConsumer[0].Consumer, r.Summary.PerShard[0].Shard = 7, 7 // the same consumer and shard in both
	r.Faults[0].RecoverWriteNs, r.Faults[0].RecoverReadNs = int64(seed), int64(seed)
	return r
}

// fill sets every zero field under v, recursively: numbers to n, strings to "x", one element in
// each empty slice or map (a histogram encoding in maps of histograms).
func fill(v reflect.Value, n int64, histogram string) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			if v.IsZero() {
				v.Set(reflect.ValueOf(resultstest.Epoch.Add(time.Duration(n) * time.Hour)))
			}
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), n, histogram)
		}
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), n, histogram)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			if v.Len() == 0 {
				v.SetBytes([]byte("1"))
			}
			return
		}
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
		for i := range v.Len() {
			fill(v.Index(i), n, histogram)
		}
	case reflect.Map:
		if v.Len() > 0 {
			return
		}
		v.Set(reflect.MakeMap(v.Type()))
		val := reflect.New(v.Type().Elem()).Elem()
		if val.Kind() == reflect.String {
			val.SetString(histogram)
		} else {
			fill(val, n, histogram)
		}
		v.SetMapIndex(reflect.ValueOf("e2e").Convert(v.Type().Key()), val)
	case reflect.String:
		if v.String() == "" {
			v.SetString("x")
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		if v.Int() == 0 {
			v.SetInt(n)
		}
	case reflect.Uint64, reflect.Uint32:
		if v.Uint() == 0 {
			v.SetUint(uint64(n))
		}
	case reflect.Float64:
		if v.Float() == 0 {
			v.SetFloat(float64(n) + 0.5)
		}
	}
}

// A merged window's loss window and last durable point come together from the repetition with the
// widest loss window among those that lost anything.
func TestMergedLossWindowIsTheWidest(t *testing.T) {
	w := func(lost, window, durable, recover int64) results.FaultWindow {
		return results.FaultWindow{Kind: "server-crash", Lost: lost, LossWindowNs: window, LastDurableNs: durable, RecoverWriteNs: recover, RecoverReadNs: recover}
	}
	for _, c := range []struct {
		name string
		in   []results.FaultWindow
		want results.FaultWindow
	}{
		{"nothing lost, then a loss", []results.FaultWindow{w(0, 0, -1, 5), w(3, 0, 7, 9)}, w(3, 0, 7, 9)},
		{"the wider wins", []results.FaultWindow{w(2, 9, 1, 5), w(3, 5, 7, -1)}, w(5, 9, 1, -1)},
		{"a loss, then nothing lost", []results.FaultWindow{w(2, 4, 1, 5), w(0, 0, -1, 3)}, w(2, 4, 1, 5)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rs []*results.Result
			for i, f := range c.in {
				r := resultstest.Make(resultstest.Options{Seed: uint64(i + 1), Seconds: 2})
				r.Faults = []results.FaultWindow{f}
				rs = append(rs, r)
			}
			m, err := results.Merge(rs, results.MergeOptions{Mode: results.MergeRepetitions})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Faults) != 1 || m.Faults[0] != c.want {
				t.Errorf("merged %+v, want %+v", m.Faults, c.want)
			}
		})
	}
}
