package bench

import (
	"testing"

	"qbench/scenarios"
)

// A produce-only and a consume-only run against the same named queue stamp with one tag, made
// from the design and the queue's name as its engine declares it (the group, which only the
// consumer names, is not in it); another queue, or a whole run, has a tag of its own.
func TestStampTagFromTheQueueName(t *testing.T) {
	tag := func(src string) uint64 {
		t.Helper()
		sc, err := scenarios.Parse("s.yaml", []byte(src), Checks())
		if err != nil {
			t.Fatal(err)
		}
		return stampTag(sc, "run-1")
	}
	const redis = "engine: redis-url\naddress: 127.0.0.1:1\nrate: 10\n"
	produce := tag(redis + "role: produce\nnames: {stream: orders}\n")
	cases := []struct {
		name, src string
		same      bool
	}{
		{"consume-only in a group", redis + "role: consume\nnames: {stream: orders, group: billing}\n", true},
		{"another stream", redis + "role: produce\nnames: {stream: invoices}\n", false},
		{"a list of the same name", redis + "design: list\nrole: produce\nnames: {list: orders}\n", false},
		{"both halves", redis + "names: {stream: orders, group: billing}\n", false},
		{"a rabbitmq queue of the same name", "engine: rabbitmq-url\naddress: amqp://h\nrate: 10\ndesign: stream\nrole: produce\nnames: {queue: orders}\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := tag(c.src); (got == produce) != c.same {
				t.Fatalf("tag %x, produce-only's %x; same: want %v", got, produce, c.same)
			}
		})
	}
	if tag(redis+"names: {stream: orders, group: g}\n") != runTag("run-1") {
		t.Fatal("a run with both halves does not stamp with its own run's tag")
	}
}
