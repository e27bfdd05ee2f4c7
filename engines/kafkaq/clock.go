// The broker's clock, for a run from several machines (engines.Clock): a record produced to a
// topic of qbench's own that stamps LogAppendTime comes back with the time the partition's leader
// appended it, on the leader's clock, in milliseconds.

package kafkaq

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	metadataapi "github.com/segmentio/kafka-go/protocol/metadata"

	"qbench/engines"
)

// clockSuffix names the clock topic after the run's (or the named) topic.
const clockSuffix = ".qbench-clock"

// clockState is the engine's clock topic, once PrepareClock made or found it. The topic is the
// run's, like its main topic: the segments of a run from several machines share it (the first
// to ask creates it), and the run's teardown deletes it (Teardown).
type clockState struct {
	mu    sync.Mutex
	topic string // "" until prepared
}

var clockRecord = []byte("qbench clock")

// clockTopicName is "<topic>.qbench-clock", kept within Kafka's 249 characters by cutting the
// topic short and naming the whole of it by a hash.
func clockTopicName(topic string) string {
	const maxLen = 249
	if len(topic)+len(clockSuffix) <= maxLen {
		return topic + clockSuffix
	}
	h := fnv.New64a()
	h.Write([]byte(topic))
	tag := fmt.Sprintf("-%016x", h.Sum64())
	return topic[:maxLen-len(clockSuffix)-len(tag)] + tag + clockSuffix
}

// PrepareClock creates the clock topic (one partition, replicated as the run's topic, stamping
// LogAppendTime) unless it exists, and produces to it until the broker answers with a time.
func (e *engine) PrepareClock(ctx context.Context) (engines.ClockInfo, error) {
	info := engines.ClockInfo{Source: "kafka LogAppendTime", Resolution: time.Millisecond}
	c := &e.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.topic != "" {
		return info, nil
	}
	topic := clockTopicName(e.topic)
	cfg := kafka.TopicConfig{
		Topic:             topic,
		NumPartitions:     1,
		ReplicationFactor: max(1, e.opts.replicationFactor),
		ConfigEntries: []kafka.ConfigEntry{
			{ConfigName: "message.timestamp.type", ConfigValue: "LogAppendTime"},
			// A few records per segment; an hour bounds what a missed teardown leaves.
			{ConfigName: "retention.ms", ConfigValue: "3600000"},
		},
	}
	res, err := e.client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{cfg}})
	if err != nil {
		return info, fmt.Errorf("%s: create clock topic %s: %w", e.name, topic, err)
	}
	switch err := res.Errors[topic]; {
	case err == nil:
	case errors.Is(err, kafka.TopicAlreadyExists):
		// kafka-go refreshes its cached metadata after a topic it created, not one it found
		// (until its MetadataTTL): a metadata request that allows auto-creation makes it fetch
		// the topic unknown to its cache (which exists, so nothing is created) and wait for it.
		req := &metadataapi.Request{TopicNames: []string{topic}, AllowAutoTopicCreation: true}
		if _, err := e.transport.RoundTrip(ctx, kafka.TCP(e.bootstrap...), req); err != nil {
			return info, fmt.Errorf("%s: clock topic %s: metadata: %w", e.name, topic, err)
		}
	default:
		return info, fmt.Errorf("%s: create clock topic %s: %w", e.name, topic, err)
	}
	c.topic = topic
	// Until the partition has a leader the produce fails; the time it returns is checked too.
	var last error
	for {
		if _, last = e.appendTime(ctx, topic); last == nil {
			return info, nil
		}
		select {
		case <-ctx.Done():
			return info, fmt.Errorf("%s: clock topic %s: %w (last: %v)", e.name, topic, ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// EngineTime is the time the clock topic's leader appended a record produced now.
func (e *engine) EngineTime(ctx context.Context) (time.Time, error) {
	e.clock.mu.Lock()
	topic := e.clock.topic
	e.clock.mu.Unlock()
	if topic == "" {
		return time.Time{}, errors.New("kafka: the clock is not prepared (PrepareClock)")
	}
	return e.appendTime(ctx, topic)
}

// appendTime produces one record and returns its LogAppendTime. acks=leader: the leader stamps
// the record when it appends it, so waiting for the followers would only widen the round trip.
func (e *engine) appendTime(ctx context.Context, topic string) (time.Time, error) {
	res, err := e.client.Produce(ctx, &kafka.ProduceRequest{
		Topic:        topic,
		Partition:    0,
		RequiredAcks: kafka.RequireOne,
		Records:      kafka.NewRecordReader(kafka.Record{Value: kafka.NewBytes(clockRecord)}),
	})
	if err != nil {
		return time.Time{}, err
	}
	if res.Error != nil {
		return time.Time{}, res.Error
	}
	if res.LogAppendTime.IsZero() {
		// The topic stamps CreateTime (made by someone else, or auto-created by a produce after
		// another segment's teardown): the broker returns no time of its own.
		return time.Time{}, fmt.Errorf("kafka: clock topic %s does not stamp LogAppendTime", topic)
	}
	return res.LogAppendTime, nil
}

// teardownClock deletes the run's clock topic. The segments of a run do not tear down; a fresh
// engine does once all are done (qbench run --teardown-only), so it cannot know whether the topic
// was made: it asks to delete it regardless. A cluster that refuses deleting topics to an engine
// that never made one is not an error (it would have refused creating one too).
func (e *engine) teardownClock(ctx context.Context) error {
	e.clock.mu.Lock()
	prepared := e.clock.topic != ""
	e.clock.mu.Unlock()
	topic := clockTopicName(e.topic)
	r, err := e.client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err == nil {
		err = r.Errors[topic]
	}
	switch {
	case err == nil, errors.Is(err, kafka.UnknownTopicOrPartition):
		return nil
	case !prepared && errors.Is(err, kafka.TopicAuthorizationFailed):
		return nil
	}
	return fmt.Errorf("%s: delete clock topic %s: %w", e.name, topic, err)
}
