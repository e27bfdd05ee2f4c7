package kafkaq

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"qbench/engines"
)

// The leader move's pure parts: the next leader is the first in-sync replica in assignment order
// other than the leader, and the new order puts it first, keeping the others' order.
func TestNextLeaderAndOrder(t *testing.T) {
	cases := []struct {
		name          string
		replicas, isr []int
		leader, want  int
		order         []int
	}{
		{"second in sync", []int{1, 2, 3}, []int{1, 2, 3}, 1, 2, []int{2, 1, 3}},
		{"skips one out of sync", []int{1, 2, 3}, []int{1, 3}, 1, 3, []int{3, 1, 2}},
		{"leader not first", []int{3, 1, 2}, []int{1, 2, 3}, 1, 3, []int{3, 1, 2}},
		{"none in sync", []int{1, 2}, []int{1}, 1, 0, nil},
		{"one replica", []int{1}, []int{1}, 1, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := nextLeader(c.replicas, c.isr, c.leader)
			if got != c.want {
				t.Fatalf("next leader %d, want %d", got, c.want)
			}
			if got != 0 && !slices.Equal(preferring(c.replicas, got), c.order) {
				t.Errorf("order %v, want %v", preferring(c.replicas, got), c.order)
			}
		})
	}
}

// A leader-move on a topic with one replica (the shared single broker) is refused when the topic
// is set up, before the run, saying what it needs.
func TestLeaderMoveRefusedOnOneBroker(t *testing.T) {
	needBroker(t, sharedErr)
	spec := engines.Spec{RunID: fmt.Sprintf("move-refused-%d", os.Getpid()), Design: Design, Producers: 1, Consumers: 1,
		Faults: []string{"leader-move"}}
	opts, err := optionsOf(spec, false)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine("kafka-url", spec, opts, []string{shared.Addr()}, nil)
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = e.Setup(ctx)
	defer e.Teardown(ctx)
	if err == nil || !strings.Contains(err.Error(), "leader-move needs another in-sync replica of partition 0") {
		t.Fatalf("Setup: %v, want the leader-move refused for want of another in-sync replica", err)
	}
	t.Log(err)
}

// moveLeaderOn moves partition 0's leadership on e and checks metadata names the new leader.
func moveLeaderOn(t *testing.T, ctx context.Context, e engines.LeaderMover, leader func() int) {
	t.Helper()
	before := leader()
	began := time.Now()
	mv, err := e.MoveLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leader-move %s -> %s in %v", mv.From, mv.To, time.Since(began).Round(time.Millisecond))
	after := leader()
	if mv.From != fmt.Sprintf("broker %d", before) || mv.To != fmt.Sprintf("broker %d", after) || before == after {
		t.Errorf("move %+v, metadata leader %d before, %d after", mv, before, after)
	}
}
