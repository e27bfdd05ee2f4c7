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
			case FaultPrimaryKill, FaultNodeRestart, FaultPartition, FaultLeaderMove:
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
			refused := err != nil && strings.Contains(err.Error(), "engine embedded cannot carry out fault kind "+string(k))
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

// Engine-side faults are carried out one at a time: a plan with one due while an earlier one
// still holds the engine (its duration, and for a fault that ends on recovery its end too) is
// refused, naming both faults, the file and both lines; consumer-side faults and commands may
// overlap anything, and back-to-back plans pass.
func TestOverlappingServerFaultsAreRefused(t *testing.T) {
	cases := []struct {
		name, faults, want string // want "" passes
	}{
		{"stall inside a stall", "  - {at: 1s, kind: stall, duration: 2s}\n  - {at: 2s, kind: stall, duration: 1s}\n",
			"f.yaml:8: faults.1.at: stall at 2s overlaps faults.0 (stall at 1s for 2s): the engine carries out one server-side fault at a time, so it would fire late; plan it at 3s or later (faults.0 is at line 7)"},
		{"two at the same moment", "  - {at: 1s, kind: command, command: [BGSAVE]}\n  - {at: 1s, kind: stall, duration: 1s}\n  - {at: 1s, kind: server-crash, duration: 1s}\n",
			"f.yaml:9: faults.2.at: server-crash at 1s overlaps faults.1 (stall at 1s for 1s)"},
		{"listed out of order", "  - {at: 3s, kind: command, command: [BGSAVE]}\n  - {at: 2s, kind: server-crash, duration: 2s}\n",
			"f.yaml:7: faults.0.at: command at 3s overlaps faults.1 (server-crash at 2s for 2s): the engine carries out one server-side fault at a time, so it would fire late; plan it after 4s, leaving time for the recovery (faults.1 is at line 8)"},
		{"at the end of a crash: its restart comes after", "  - {at: 1s, kind: server-crash, duration: 1s}\n  - {at: 2s, kind: stall, duration: 1s}\n",
			"faults.1.at: stall at 2s overlaps faults.0 (server-crash at 1s for 1s)"},
		{"at the end of a stall", "  - {at: 1s, kind: stall, duration: 1s}\n  - {at: 2s, kind: stall, duration: 1s}\n", ""},
		{"after a crash", "  - {at: 1s, kind: server-crash, duration: 1s}\n  - {at: 3s, kind: stall, duration: 1s}\n", ""},
		{"commands at once", "  - {at: 1s, kind: command, command: [BGSAVE]}\n  - {at: 1s, kind: command, command: [BGREWRITEAOF]}\n", ""},
		{"a command before a stall", "  - {at: 1s, kind: command, command: [BGSAVE]}\n  - {at: 1s, kind: stall, duration: 1s}\n", ""},
		{"consumer faults inside a stall", "  - {at: 1s, kind: stall, duration: 3s}\n  - {at: 2s, kind: consumer-pause, duration: 1s}\n  - {at: 2s, kind: consumer-crash}\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "engine: redis\nrate: 10\nduration: 9s\nconsumers: 2\nappendonly: no\nfaults:\n" + c.faults
			src = strings.Replace(src, "appendonly: no\n", "policy: none\n", 1)
			_, err := Parse("f.yaml", []byte(src), testChecks)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused a plan that fires on schedule: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
}
