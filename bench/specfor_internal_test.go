package bench

import (
	"reflect"
	"strings"
	"testing"

	"qbench/engines"
	"qbench/scenarios"
)

// specFor copies the scenario's engine-neutral fields into engines.Spec (the engines package may
// not import scenarios): a scenario with every such field set gives a spec with every field set,
// so a field added to Spec and not copied (as WaitOptions.AOF once was: read by the engine, never
// set) fails here. The engines' own options travel whole, in Options.
func TestSpecForCopiesEveryField(t *testing.T) {
	sc := &scenarios.Scenario{
		Design: "stream", Producers: 2, Consumers: 3, Replicas: 1, InFlight: 4, Shards: 2,
		ShardRouting: "zipf", ShardSkew: 1.5, Seed: 7, Address: "127.0.0.1:1", Policy: "aof-always",
		Names:   scenarios.Names{"stream": "s", "group": "g"},
		Faults:  []scenarios.Fault{{Kind: scenarios.FaultPowerLoss}},
		Options: struct{ Any int }{1},
	}
	checkAllSet(t, "spec", reflect.ValueOf(specFor(sc, "r")))
}

// Spec carries only what every engine shares: the Redis designs' options are the redis:
// section's (redisq.Options, in Spec.Options), not fields of their own.
func TestSpecHasNoEngineSections(t *testing.T) {
	typ := reflect.TypeOf(engines.Spec{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		switch f.Name {
		case "Stream", "List", "PubSub", "Wait":
			t.Errorf("engines.Spec.%s is a Redis option: it belongs in redisq.Options (the redis: section)", f.Name)
		}
		if strings.HasSuffix(f.Type.Name(), "Options") {
			t.Errorf("engines.Spec.%s is of type %s: an engine's options travel in Spec.Options", f.Name, f.Type)
		}
	}
}

// scenarios.Plan is a copy of engines.Plan (scenarios imports no engine package) and checkFor
// copies it field by field: the two have the same fields, and every field arrives.
func TestPlanCopyComplete(t *testing.T) {
	a, b := reflect.TypeOf(engines.Plan{}), reflect.TypeOf(scenarios.Plan{})
	if a.NumField() != b.NumField() {
		t.Fatalf("engines.Plan has %d fields, scenarios.Plan %d", a.NumField(), b.NumField())
	}
	for i := 0; i < a.NumField(); i++ {
		if f, ok := b.FieldByName(a.Field(i).Name); !ok || f.Type != a.Field(i).Type {
			t.Errorf("engines.Plan.%s (%s) has no twin in scenarios.Plan", a.Field(i).Name, a.Field(i).Type)
		}
	}
	var got engines.Plan
	check := checkFor(func(_ any, p engines.Plan) error { got = p; return nil })
	_ = check(nil, scenarios.Plan{Design: "d", Consumers: 2, Names: map[string]string{"queue": "q"}, Consumes: true, AnyDesign: true})
	checkAllSet(t, "plan", reflect.ValueOf(got))
}

func checkAllSet(t *testing.T, what string, v reflect.Value) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		name := what + "." + v.Type().Field(i).Name
		if f.IsZero() {
			t.Errorf("%s is not set", name)
		} else if f.Kind() == reflect.Struct {
			checkAllSet(t, name, f)
		}
	}
}
