package kafkaq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/segmentio/kafka-go"

	"qbench/engines"
)

// The leader-move fault, on kafka-url and on a managed cluster: partition 0's leadership is
// handed to another in-sync replica through the admin API, as an operator moves it, with nothing
// killed. Kafka elects the preferred replica (the first of the partition's replica list), so the
// list is reordered first (AlterPartitionReassignments with the same replicas: no data moves)
// to put the new leader first, then the preferred leader is elected (ElectLeaders). Reordering
// also keeps auto.leader.rebalance.enable from moving the leadership back.

// moveLimit bounds each step of the move: the reassignment, the election, the new leader
// showing in metadata.
const moveLimit = 15 * time.Second

// partitionReplicas reads partition p of the run's topic: its replicas in assignment order, its
// in-sync replicas and its leader (0: none).
func (e *engine) partitionReplicas(ctx context.Context, p int) (replicas, isr []int, leader int, err error) {
	m, err := e.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{e.topic}})
	if err != nil {
		return nil, nil, 0, err
	}
	for _, t := range m.Topics {
		if t.Name != e.topic {
			continue
		}
		if t.Error != nil {
			return nil, nil, 0, t.Error
		}
		for _, part := range t.Partitions {
			if part.ID != p {
				continue
			}
			for _, r := range part.Replicas {
				replicas = append(replicas, r.ID)
			}
			for _, r := range part.Isr {
				isr = append(isr, r.ID)
			}
			if part.Leader.Port != 0 {
				leader = part.Leader.ID
			}
			return replicas, isr, leader, nil
		}
	}
	return nil, nil, 0, fmt.Errorf("%s: partition %d of %s not in metadata", e.name, p, e.topic)
}

// nextLeader is the first in-sync replica, in assignment order, other than the leader; 0 when
// there is none.
func nextLeader(replicas, isr []int, leader int) int {
	for _, r := range replicas {
		if r != leader && slices.Contains(isr, r) {
			return r
		}
	}
	return 0
}

// preferring is replicas reordered with first at the head, the others in their order.
func preferring(replicas []int, first int) []int {
	out := []int{first}
	for _, r := range replicas {
		if r != first {
			out = append(out, r)
		}
	}
	return out
}

// prepareLeaderMove checks, once the topic exists and before the run, that the move can be made:
// a topic qbench created (reordering a topic's replicas is a lasting change, not made to one
// qbench does not own), another in-sync replica of partition 0, and a user allowed to elect
// leaders (ElectLeaders for the preferred leader, which is the leader of a new topic: nothing
// to elect, or CLUSTER_AUTHORIZATION_FAILED; the reassignment needs the same Alter on the
// cluster).
func (e *engine) prepareLeaderMove(ctx context.Context) error {
	if !slices.Contains(e.spec.Faults, "leader-move") {
		return nil
	}
	if e.spec.Names[NameTopic] != "" {
		return fmt.Errorf("%s: leader-move reorders partition 0's replicas, a lasting change qbench makes only to a topic it created, not to names.topic %s", e.name, e.topic)
	}
	replicas, isr, leader, err := e.partitionReplicas(ctx, 0)
	if err != nil {
		return fmt.Errorf("%s: leader-move: %w", e.name, err)
	}
	if nextLeader(replicas, isr, leader) == 0 {
		return fmt.Errorf("%s: leader-move needs another in-sync replica of partition 0 to hand the leadership to; %s has replicas %v, in sync %v, leader %d (a replication factor of 2 or more on 2 or more brokers)",
			e.name, e.topic, replicas, isr, leader)
	}
	r, err := e.client.ElectLeaders(ctx, &kafka.ElectLeadersRequest{Topic: e.topic, Partitions: []int{0}, Timeout: moveLimit})
	if err == nil {
		err = electErr(r)
	}
	if err != nil {
		return fmt.Errorf("%s: leader-move needs the admin API's ElectLeaders and AlterPartitionReassignments (Kafka 2.4 or later, Alter on the cluster); probing ElectLeaders for partition 0 of %s: %w", e.name, e.topic, err)
	}
	return nil
}

// electErr is an ElectLeaders response's error; none needed (the preferred replica leads) is
// none.
func electErr(r *kafka.ElectLeadersResponse) error {
	if r.Error != nil {
		return r.Error
	}
	for _, p := range r.PartitionResults {
		if p.Error != nil && !errors.Is(p.Error, kafka.ElectionNotNeeded) {
			return p.Error
		}
	}
	return nil
}

// MoveLeader is leader-move (engines.LeaderMover): partition 0's replica list reordered so that
// its next in-sync replica is preferred, that replica elected, and metadata read until it names
// the new leader.
func (e *engine) MoveLeader(ctx context.Context) (engines.LeaderMove, error) {
	replicas, isr, leader, err := e.partitionReplicas(ctx, 0)
	if err != nil {
		return engines.LeaderMove{}, err
	}
	mv := engines.LeaderMove{From: fmt.Sprintf("broker %d", leader)}
	next := nextLeader(replicas, isr, leader)
	if next == 0 {
		return mv, fmt.Errorf("partition 0 of %s has no other in-sync replica (replicas %v, in sync %v)", e.topic, replicas, isr)
	}
	order := preferring(replicas, next)
	ar, err := e.client.AlterPartitionReassignments(ctx, &kafka.AlterPartitionReassignmentsRequest{
		Topic: e.topic, Assignments: []kafka.AlterPartitionReassignmentsRequestAssignment{{PartitionID: 0, BrokerIDs: order}}, Timeout: moveLimit})
	if err == nil {
		err = ar.Error
		for _, p := range ar.PartitionResults {
			err = errors.Join(err, p.Error)
		}
	}
	if err != nil {
		return mv, fmt.Errorf("reordering partition 0's replicas to %v: %w", order, err)
	}
	wctx, cancel := context.WithTimeout(ctx, moveLimit)
	defer cancel()
	// The election fails with PREFERRED_LEADER_NOT_AVAILABLE until the new order has reached the
	// controller's view of the partition: try again until it is taken.
	for {
		r, err := e.client.ElectLeaders(wctx, &kafka.ElectLeadersRequest{Topic: e.topic, Partitions: []int{0}, Timeout: moveLimit})
		if err == nil {
			err = electErr(r)
		}
		if err == nil {
			break
		}
		select {
		case <-wctx.Done():
			return mv, fmt.Errorf("electing broker %d for partition 0: %w", next, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	for {
		_, _, now, err := e.partitionReplicas(wctx, 0)
		if err == nil && now == next {
			mv.To = fmt.Sprintf("broker %d", next)
			return mv, nil
		}
		select {
		case <-wctx.Done():
			return mv, fmt.Errorf("metadata does not name broker %d leader of partition 0 within %s (last: leader %d, %v)", next, moveLimit, now, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
