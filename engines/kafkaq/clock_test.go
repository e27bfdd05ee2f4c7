package kafkaq

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"qbench/engines"
)

// The broker runs on this machine, so the true offset of the broker's clock against ours is 0:
// the least of a few round trips must put it within its bound (half the round trip plus the
// clock's millisecond); the clock topic stamps LogAppendTime, a second segment finds it, and the
// run's teardown (a fresh engine, as qbench run --teardown-only) deletes it.
func TestClockAgainstTheLocalClock(t *testing.T) {
	creator := newTestEngine(t, engines.Spec{Design: Design, Producers: 1, Consumers: 1})
	// A second segment of the same run: the same topic, set up already.
	finder := newEngine("kafka-url", creator.spec, creator.opts, creator.bootstrap, nil)
	defer finder.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, c := range []struct {
		name      string
		e         *engine
		prepareIn time.Duration // finding a topic must not wait for the metadata cache's TTL
	}{
		{"creator", creator, 10 * time.Second},
		{"finder", finder, 3 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			began := time.Now()
			info, err := c.e.PrepareClock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(began); d > c.prepareIn {
				t.Errorf("PrepareClock took %s, want under %s", d, c.prepareIn)
			}
			if info.Source != "kafka LogAppendTime" || info.Resolution != time.Millisecond {
				t.Errorf("clock info %+v", info)
			}
			if c.e.clock.topic != creator.topic+clockSuffix {
				t.Errorf("clock topic %q, want %q", c.e.clock.topic, creator.topic+clockSuffix)
			}
			bestRTT, offset := time.Duration(-1), time.Duration(0)
			for range 16 {
				t0 := time.Now()
				et, err := c.e.EngineTime(ctx)
				rtt := time.Since(t0)
				if err != nil {
					t.Fatal(err)
				}
				if bestRTT < 0 || rtt < bestRTT {
					bestRTT, offset = rtt, et.Add(info.Resolution/2).Sub(t0.Add(rtt/2)) // the middle of the truncated millisecond, as bench's estimate
				}
			}
			bound := bestRTT/2 + info.Resolution/2
			const slack = time.Millisecond // the wall clock read twice; stepped by NTP meanwhile
			if offset > bound+slack || -offset > bound+slack {
				t.Errorf("offset %s outside its bound %s (rtt %s) of the true 0", offset, bound, bestRTT)
			}
			if bound < time.Millisecond/2 || bound > time.Second {
				t.Errorf("bound %s", bound)
			}
			t.Logf("offset %s, bound %s, least rtt %s", offset, bound, bestRTT)
		})
	}

	r, err := creator.client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: creator.clock.topic, ConfigNames: []string{"message.timestamp.type"}}}})
	if err != nil || len(r.Resources) != 1 || len(r.Resources[0].ConfigEntries) != 1 || r.Resources[0].ConfigEntries[0].ConfigValue != "LogAppendTime" {
		t.Errorf("clock topic config: %+v, %v", r, err)
	}

	clockTopic := creator.clock.topic
	if !topicExists(t, creator, clockTopic) {
		t.Fatalf("clock topic %s not there", clockTopic)
	}
	fresh := newEngine("kafka-url", creator.spec, creator.opts, creator.bootstrap, nil)
	defer fresh.Close()
	if err := fresh.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	if topicExists(t, creator, clockTopic) {
		t.Errorf("clock topic %s still there after teardown", clockTopic)
	}
	if err := fresh.Teardown(ctx); err != nil { // a run that never asked the clock
		t.Errorf("second teardown: %v", err)
	}
}

// topicExists asks a broker afresh (not the transport's cache) whether topic exists.
func topicExists(t *testing.T, e *engine, topic string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := kafka.DialContext(ctx, "tcp", e.bootstrap[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ps, err := conn.ReadPartitions(topic)
	switch {
	case errors.Is(err, kafka.UnknownTopicOrPartition):
		return false
	case err != nil:
		t.Fatal(err)
	}
	return len(ps) > 0
}

func TestClockTopicName(t *testing.T) {
	long := strings.Repeat("x", 249)
	for _, c := range []struct{ topic, want string }{
		{"qbench-run1", "qbench-run1.qbench-clock"},
		{long, ""}, // cut and hashed
	} {
		got := clockTopicName(c.topic)
		if c.want != "" && got != c.want {
			t.Errorf("clockTopicName(%q) = %q, want %q", c.topic, got, c.want)
		}
		if len(got) > 249 || !strings.HasSuffix(got, clockSuffix) {
			t.Errorf("clockTopicName(%.20q...) = %q: too long or without the suffix", c.topic, got)
		}
	}
	if clockTopicName(long) == clockTopicName(long[:248]+"y") {
		t.Error("two long topics share a clock topic")
	}
}
