package bench

import (
	"reflect"
	"testing"
	"time"

	"qbench/scenarios"
)

// specFor copies the Redis designs' sections field by field into engines.Spec (the engines
// package may not import scenarios): a scenario with every field of those sections set gives a
// spec with every field of their copies set, so a field added to one side and not copied (as
// WaitOptions.AOF once was: read by the engine, never set) fails here.
func TestSpecForCopiesEverySectionField(t *testing.T) {
	d := scenarios.Duration(time.Second)
	sc := &scenarios.Scenario{
		Stream: scenarios.StreamOptions{MaxLen: 1, ExactTrim: true, Ack: "after", Count: 1, Block: d,
			GroupStart: "0", Groups: 2, ClaimIdle: d, MaxDeliveries: 3},
		List:   scenarios.ListOptions{Push: "rpush", Timeout: d, VisibilityTimeout: d, MaxDeliveries: 2, Count: 4},
		PubSub: scenarios.PubSubOptions{Pattern: true},
		Wait:   scenarios.WaitOptions{Replicas: 1, AOFLocal: 1, AOF: true, Timeout: d, Required: true},
	}
	// Every source field is set, so an unset copy is the copy's fault.
	for name, v := range map[string]any{"stream": sc.Stream, "list": sc.List, "pubsub": sc.PubSub, "wait": sc.Wait} {
		checkAllSet(t, "scenario "+name, reflect.ValueOf(v))
	}
	spec := specFor(sc, "r")
	for name, v := range map[string]any{"Stream": spec.Stream, "List": spec.List, "PubSub": spec.PubSub, "Wait": spec.Wait} {
		checkAllSet(t, "spec."+name, reflect.ValueOf(v))
	}
}

func checkAllSet(t *testing.T, what string, v reflect.Value) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Errorf("%s.%s is not set", what, v.Type().Field(i).Name)
		}
	}
}
