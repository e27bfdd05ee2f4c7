package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// The traits table drives validation: a kind that needs a duration is refused without one, the
// others are not; a kind needing the power-loss file system asks for it; consumer-side kinds
// need no engine support, engine-side ones do.
func TestFaultTraitsDriveValidation(t *testing.T) {
	if len(FaultKinds) != len(faultTraits) {
		t.Fatalf("%d kinds listed, %d in the traits table", len(FaultKinds), len(faultTraits))
	}
	for _, k := range FaultKinds {
		t.Run(string(k), func(t *testing.T) {
			tr, ok := k.Traits()
			if !ok {
				t.Fatal("listed but not in the table")
			}
			extra := ""
			switch k {
			case FaultSlowConsumer:
				extra = ", work: {dist: fixed, value: 1ms}"
			case FaultCommand:
				extra = ", command: [BGSAVE]"
			}
			// redis reads every shared section and carries out every single-node engine-side kind;
			// the cluster kinds need a cluster.
			engine := "redis"
			switch k {
			case FaultPrimaryKill, FaultNodeRestart, FaultPartition:
				engine = "redis-cluster"
			case FaultPartitionLeaderKill:
				engine = "kafka"
			}
			replicas := "replicas: 1\n"
			if engine == "kafka" {
				replicas = ""
			}
			src := fmt.Sprintf("engine: %s\nrate: 10\nduration: 5s\n%sfaults:\n  - {at: 1s, kind: %s%s}\n", engine, replicas, k, extra)
			sc, err := Parse("f.yaml", []byte(src), testChecks)
			needs := err != nil && strings.Contains(err.Error(), "faults.0.duration: a "+string(k)+" needs a positive duration")
			if needs != tr.NeedsDuration {
				t.Fatalf("without a duration: %v (needs one: %v)", err, tr.NeedsDuration)
			}
			if !tr.NeedsDuration {
				if err != nil {
					t.Fatal(err)
				}
				if sc.NeedsLossyFS() != tr.NeedsLossyFS {
					t.Fatalf("NeedsLossyFS %v, trait %v", sc.NeedsLossyFS(), tr.NeedsLossyFS)
				}
			}
			// embedded carries out only stall and command; consumer-side kinds run anywhere.
			src = fmt.Sprintf("engine: embedded\nrate: 10\nduration: 5s\nfaults:\n  - {at: 1s, kind: %s, duration: 1s%s}\n", k, extra)
			_, err = Parse("f.yaml", []byte(src), testChecks)
			refused := err != nil && strings.Contains(err.Error(), "engine embedded cannot carry out a "+string(k))
			if want := k.EngineSide() && k != FaultStall && k != FaultCommand; refused != want {
				t.Fatalf("on embedded: %v (want refused: %v)", err, want)
			}
		})
	}
	if FaultKind("meteor").EngineSide() {
		t.Error("an unknown kind is engine-side")
	}
}

// A consumer crash destroys messages only before its work; the other kinds by their trait.
func TestFaultDestructive(t *testing.T) {
	cases := []struct {
		f    Fault
		want bool
	}{
		{Fault{Kind: FaultServerCrash}, true},
		{Fault{Kind: FaultStall}, false},
		{Fault{Kind: FaultSubscriberOffline}, true},
		{Fault{Kind: FaultPartition}, true}, // the minority primary's lone acknowledgements
		{Fault{Kind: FaultConsumerCrash}, false},
		{Fault{Kind: FaultConsumerCrash, Point: "before-work"}, true},
	}
	for _, c := range cases {
		if got := c.f.Destructive(); got != c.want {
			t.Errorf("%+v: destructive %v, want %v", c.f, got, c.want)
		}
	}
}
