package kafkaq

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/segmentio/kafka-go"

	"qbench/engines"
)

// healthState carries what Health needs between readings: Kafka's admin API gives the ISR now,
// not its history (the broker counts ISR shrinks in JMX, which a client cannot read), so
// shrinks and expansions are counted here from one reading to the next.
type healthState struct {
	mu         sync.Mutex
	isr        map[int]int // partition -> ISR size at the last reading
	shrinks    int64
	expands    int64
	leaderMove int64
	leader     map[int]int
}

// Health reads the run's topic from metadata (engines.HealthReporter), the cluster view a
// Kafka admin watches: partitions under-replicated (ISR smaller than the replica set), under
// min.insync.replicas (acks=all writes to them fail), offline (no leader), the smallest ISR,
// each partition's ISR size and leader, the brokers metadata lists, and ISR shrinks, ISR
// expansions and leader changes counted across readings. A metadata request goes to any live
// broker, so health is read through a leader kill.
func (e *engine) Health(ctx context.Context) (engines.Health, error) {
	h := engines.Health{Counters: map[string]int64{}, Status: map[string]string{}}
	m, err := e.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{e.topic}})
	if err != nil {
		return h, err
	}
	if len(m.Topics) != 1 || m.Topics[0].Error != nil {
		return h, fmt.Errorf("%s: health: topic %s not in metadata: %v", e.name, e.topic, m.Topics)
	}
	minISR := 1
	if v, err := strconv.Atoi(e.opts.topic["min.insync.replicas"]); err == nil {
		minISR = v
	}
	c := h.Counters
	c["brokers"] = int64(len(m.Brokers))
	c["partitions"] = int64(len(m.Topics[0].Partitions))
	c["isr_min"] = -1
	for _, p := range m.Topics[0].Partitions {
		isr := len(p.Isr)
		c["isr_size.p"+strconv.Itoa(p.ID)] = int64(isr)
		if c["isr_min"] < 0 || int64(isr) < c["isr_min"] {
			c["isr_min"] = int64(isr)
		}
		if isr < len(p.Replicas) {
			c["under_replicated_partitions"]++
		}
		if isr < minISR {
			c["under_min_isr_partitions"]++
		}
		leader := p.Leader.ID
		if p.Leader.Port == 0 {
			c["offline_partitions"]++
			leader = -1
		}
		c["leader.p"+strconv.Itoa(p.ID)] = int64(leader)
		c["offline_replicas"] += int64(len(p.OfflineReplicas))
	}
	for _, k := range []string{"under_replicated_partitions", "under_min_isr_partitions", "offline_partitions", "offline_replicas"} {
		c[k] += 0 // present at zero, so a reading says "none" rather than nothing
	}
	e.health.observe(m.Topics[0].Partitions, c)
	return h, nil
}

// observe counts ISR shrinks and expansions and leader changes since the previous reading into c
// (as running totals, so a delta over the run is the number of events seen).
func (s *healthState) observe(parts []kafka.Partition, c map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isr == nil {
		s.isr, s.leader = map[int]int{}, map[int]int{}
	}
	for _, p := range parts {
		isr, leader := len(p.Isr), p.Leader.ID
		if p.Leader.Port == 0 {
			leader = -1
		}
		if prev, ok := s.isr[p.ID]; ok {
			switch {
			case isr < prev:
				s.shrinks++
			case isr > prev:
				s.expands++
			}
			if s.leader[p.ID] != leader {
				s.leaderMove++
			}
		}
		s.isr[p.ID], s.leader[p.ID] = isr, leader
	}
	c["isr_shrinks"] = s.shrinks
	c["isr_expands"] = s.expands
	c["leader_changes"] = s.leaderMove
}
