// Administration through the admin API: probing a broker, creating, waiting for and deleting
// the run's topic, and reading back the configuration in force.

package kafkaq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// Probe reports whether a broker answers a metadata request at addr and lists itself.
func Probe(ctx context.Context, addr string) error {
	t := &kafka.Transport{DialTimeout: time.Second}
	defer t.CloseIdleConnections()
	c := &kafka.Client{Addr: kafka.TCP(addr), Transport: t, Timeout: 2 * time.Second}
	m, err := c.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return err
	}
	if len(m.Brokers) == 0 {
		return errors.New("metadata lists no brokers")
	}
	return nil
}

func (e *engine) Setup(ctx context.Context) error {
	if e.opts.replicationFactor == 0 {
		// Not set on kafka-url: as many copies as a production topic keeps, up to the cluster's
		// size, so a single test broker still works.
		m, err := e.client.Metadata(ctx, &kafka.MetadataRequest{})
		if err != nil {
			return fmt.Errorf("%s: metadata: %w", e.name, err)
		}
		e.opts.replicationFactor = max(1, min(3, len(m.Brokers)))
		if err := e.opts.checkISR(); err != nil {
			return err
		}
	}
	cfg := kafka.TopicConfig{
		Topic:             e.topic,
		NumPartitions:     e.opts.partitions,
		ReplicationFactor: e.opts.replicationFactor,
	}
	for _, k := range sortedKeys(e.opts.topic) {
		cfg.ConfigEntries = append(cfg.ConfigEntries, kafka.ConfigEntry{ConfigName: k, ConfigValue: e.opts.topic[k]})
	}
	res, err := e.client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{cfg}})
	if err != nil {
		return fmt.Errorf("%s: create topic %s: %w", e.name, e.topic, err)
	}
	// A topic that exists already is this run's when the scenario names it (role runs) or when
	// the segments of a run from several machines (qbench run --segment) each set up and the
	// first created it.
	if err := res.Errors[e.topic]; err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		return fmt.Errorf("%s: create topic %s: %w", e.name, e.topic, err)
	}
	if err := e.waitTopic(ctx); err != nil {
		return err
	}
	return e.prepareLeaderMove(ctx) // refused now rather than failing in the run
}

// waitTopic waits until metadata shows every partition with a leader: CreateTopics returns
// once the controller has the topic, before the brokers serve it.
func (e *engine) waitTopic(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last error
	for {
		m, err := e.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{e.topic}})
		switch {
		case err != nil:
			last = err
		case len(m.Topics) != 1 || m.Topics[0].Error != nil:
			last = fmt.Errorf("topic not in metadata yet: %v", m.Topics)
		default:
			ready := len(m.Topics[0].Partitions) == e.opts.partitions
			for _, p := range m.Topics[0].Partitions {
				if p.Error != nil || p.Leader.Port == 0 {
					ready = false
				}
			}
			if ready {
				return nil
			}
			last = errors.New("partitions without a leader")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: topic %s not ready: %w (last: %v)", e.name, e.topic, ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (e *engine) Teardown(ctx context.Context) error {
	var errs []error
	if err := e.teardownClock(ctx); err != nil { // qbench's own, even beside a named topic
		errs = append(errs, err)
	}
	if e.spec.Names[NameTopic] != "" {
		return errors.Join(errs...) // an existing system's topic and group stay as they are
	}
	if r, err := e.client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{e.topic}}); err != nil {
		errs = append(errs, err)
	} else if err := r.Errors[e.topic]; err != nil && !errors.Is(err, kafka.UnknownTopicOrPartition) {
		errs = append(errs, err)
	}
	// Deleting the group is tidiness, not correctness: a group that never existed, still has
	// members (consumers not closed), or whose coordinator is not loaded yet (no group was ever
	// used on a fresh broker) is left to expire with offsets.retention.minutes.
	if r, err := e.client.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{e.group}}); err == nil {
		switch err := r.Errors[e.group]; {
		case err == nil, errors.Is(err, kafka.GroupIdNotFound), errors.Is(err, kafka.NonEmptyGroup),
			errors.Is(err, kafka.NotCoordinatorForGroup), errors.Is(err, kafka.GroupCoordinatorNotAvailable),
			errors.Is(err, kafka.GroupLoadInProgress):
		default:
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: teardown %s: %w", e.name, e.topic, err)
	}
	return nil
}

// readConfigs reads the durability settings back from the cluster via DescribeConfigs.
func (e *engine) readConfigs(ctx context.Context, into map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := e.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{e.topic}})
	if err != nil {
		return err
	}
	res := []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic,
		ResourceName: e.topic,
		ConfigNames:  append([]string{"unclean.leader.election.enable"}, keysOf(topicKeys, e.opts.topic)...),
	}}
	if len(m.Brokers) > 0 {
		res = append(res, kafka.DescribeConfigRequestResource{
			ResourceType: kafka.ResourceTypeBroker,
			ResourceName: strconv.Itoa(m.Brokers[0].ID),
			ConfigNames:  keysOf(brokerKeys, e.opts.broker),
		})
	}
	r, err := e.client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: res})
	if err != nil {
		return err
	}
	for _, rr := range r.Resources {
		prefix := "topic."
		if rr.ResourceType == int8(kafka.ResourceTypeBroker) {
			prefix = "broker."
		}
		if rr.Error != nil {
			into[prefix+"error"] = rr.Error.Error()
			continue
		}
		for _, c := range rr.ConfigEntries {
			into[prefix+c.ConfigName] = c.ConfigValue
		}
	}
	return nil
}

// keysOf is the union of a fixed key set and the keys of extra, sorted.
func keysOf(fixed map[string]bool, extra map[string]string) []string {
	set := map[string]string{}
	for k := range fixed {
		set[k] = ""
	}
	for k := range extra {
		set[k] = ""
	}
	return sortedKeys(set)
}

// waitBrokers waits until metadata lists n brokers: a node answers as soon as it has registered
// itself, before the others have, and a topic created then would not get all its replicas.
func waitBrokers(ctx context.Context, addrs []string, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t := &kafka.Transport{DialTimeout: time.Second}
	defer t.CloseIdleConnections()
	c := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: t, Timeout: 2 * time.Second}
	var last error
	for {
		m, err := c.Metadata(ctx, &kafka.MetadataRequest{})
		switch {
		case err != nil:
			last = err
		case len(m.Brokers) < n:
			last = fmt.Errorf("metadata lists %d of %d brokers", len(m.Brokers), n)
		default:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafka: cluster of %d not formed: %w (last: %v)", n, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// partitionLeader returns the node leading partition p of the run's topic and the partition's
// in-sync replicas, from a fresh metadata request. Leader 0 means the partition has none.
func (e *engine) partitionLeader(ctx context.Context, p int) (leader int, isr []int, err error) {
	m, err := e.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{e.topic}})
	if err != nil {
		return 0, nil, err
	}
	for _, t := range m.Topics {
		if t.Name != e.topic {
			continue
		}
		if t.Error != nil {
			return 0, nil, t.Error
		}
		for _, part := range t.Partitions {
			if part.ID != p {
				continue
			}
			for _, r := range part.Isr {
				isr = append(isr, r.ID)
			}
			if part.Leader.Port == 0 {
				return 0, isr, nil
			}
			return part.Leader.ID, isr, nil
		}
	}
	return 0, nil, fmt.Errorf("%s: partition %d of %s not in metadata", e.name, p, e.topic)
}
