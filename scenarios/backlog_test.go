package scenarios

import (
	"strings"
	"testing"
)

// backlog: and role:/names: are checked before a run, each error naming file, line and field.
func TestBacklogAndRoleValidation(t *testing.T) {
	cases := []struct {
		name, yaml, want string // want "" means valid
	}{
		{"backlog messages", "rate: 1000\nbacklog: {messages: 5000}\n", ""},
		{"backlog duration stop", "rate: 1000\nbacklog:\n  duration: 2s\n  producers: stop\n", ""},
		{"backlog on a list", "rate: 1000\ndesign: list\nbacklog: {messages: 5000}\n", ""},
		{"backlog both", "rate: 1000\nbacklog:\n  messages: 10\n  duration: 2s\n", "bad.yaml:2: backlog: takes one of messages or duration"},
		{"backlog neither", "rate: 1000\nbacklog:\n  producers: stop\n", "bad.yaml:2: backlog: needs messages: N or duration"},
		{"backlog producers word", "rate: 1000\nbacklog:\n  messages: 10\n  producers: pause\n", "bad.yaml:4: backlog.producers: must be keep or stop"},
		{"backlog too many", "rate: 1000\nbacklog:\n  messages: 60000000\n", "bad.yaml:3: backlog.messages: must be between 1 and 50000000"},
		{"backlog negative", "rate: 1000\nbacklog:\n  messages: -1\n", "bad.yaml:3: backlog.messages: must be between 1"},
		{"backlog too long", "rate: 1000\nduration: 10s\nbacklog:\n  duration: 24h\n", "bad.yaml:4: backlog.duration: the fill and the duration together must be at most"},
		{"backlog pubsub", "rate: 1000\ndesign: pubsub\nbacklog: {messages: 10}\n", "bad.yaml:3: backlog: pub/sub stores nothing"},
		{"backlog closed loop", "rate: max\nbacklog:\n  messages: 10\n", "bad.yaml:3: backlog.messages: needs a rate to fill at"},
		{"backlog closed loop by duration", "rate: max\nbacklog: {duration: 1s}\n", ""},
		{"backlog profile", "profile: {ramp: {from: 10, to: 100}}\nbacklog: {messages: 10}\n", "bad.yaml:2: backlog: fills at a constant rate"},
		{"backlog with role", "rate: 10\nrole: produce\nbacklog: {messages: 10}\n", "bad.yaml:3: backlog: needs producers and consumers in one run"},

		{"role produce", "engine: redis-url\naddress: 127.0.0.1:1\nrate: 10\nrole: produce\nnames: {stream: orders}\n", ""},
		{"role consume needs no rate", "engine: redis-url\naddress: 127.0.0.1:1\nrole: consume\nnames: {stream: orders, group: billing}\n", ""},
		{"role unknown", "rate: 10\nrole: read\n", "bad.yaml:2: role: must be produce, consume or both"},
		{"role needs names on url", "engine: redis-url\naddress: 127.0.0.1:1\nrate: 10\nrole: produce\n", "bad.yaml:4: role: produce on redis-url needs names.stream"},
		{"role needs list name", "engine: redis-url\naddress: 127.0.0.1:1\ndesign: list\nrole: consume\n", "bad.yaml:4: role: consume on redis-url needs names.list"},
		{"kafka needs topic", "engine: kafka-url\naddress: 127.0.0.1:1\nrate: 10\nrole: produce\n", "bad.yaml:4: role: produce on kafka-url needs names.topic"},
		{"role on managed needs no names", "engine: redis\nrate: 10\nrole: produce\n", ""},
		{"consume needs group", "engine: redis-url\naddress: 127.0.0.1:1\nrole: consume\nnames:\n  stream: orders\n", "bad.yaml:4: names.group: is required when consumers read a named stream"},
		{"names wrong design", "rate: 10\ndesign: list\nnames:\n  stream: orders\n", "bad.yaml:4: names.stream: is not a name design list uses"},
		{"names on reliable-list", "rate: 10\ndesign: reliable-list\nnames:\n  list: jobs\n", "bad.yaml:4: names.list: design reliable-list does not run against named keys"},
		{"names group on list", "rate: 10\ndesign: list\nnames:\n  list: jobs\n  group: g\n", "bad.yaml:5: names.group: is not a name design list uses"},
		{"bad topic", "engine: kafka\nrate: 10\nnames:\n  topic: \"a b\"\n  group: g\n", "bad.yaml:4: names.topic: must be 1 to 249 characters"},
		{"names and shards", "rate: 10\nshards: 4\nnames: {stream: s, group: g}\n", "bad.yaml:2: shards: spreads the queue over keys of the run's own"},
		{"consume-only poison", "engine: redis\nrole: consume\npoison_every: 3\n", "bad.yaml:3: poison_every: picks messages by their producer's sequence number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(c.yaml), testChecks)
			if c.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// The backlog's fields are sweepable: a matrix over the fill size makes one cell per size.
func TestBacklogSweeps(t *testing.T) {
	sc, err := Parse("m.yaml", []byte("rate: 1000\nbacklog: {messages: 10}\nmatrix:\n  backlog.messages: [1000, 2000]\n  backlog.producers: [keep, stop]\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 || cells[3].Scenario.Backlog.Messages != 2000 || cells[3].Scenario.Backlog.Producers != "stop" {
		t.Fatalf("cells %+v", cells)
	}
	if _, err := Parse("m.yaml", []byte("rate: 1000\nbacklog: {messages: 10}\nmatrix:\n  backlog.producers: [keep, halt]\n"), testChecks); err == nil ||
		!strings.Contains(err.Error(), "m.yaml:4: matrix.backlog.producers.1: must be keep or stop") {
		t.Fatalf("bad cell: %v", err)
	}
}
