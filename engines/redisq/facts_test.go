package redisq

import (
	"context"
	"fmt"
	"testing"
	"time"

	"qbench/engines"
)

// The facts read from the server: its version from INFO, each persistence and memory setting
// from CONFIG GET.
func TestFactsReadVersionAndSettings(t *testing.T) {
	ctx := context.Background()
	reg, err := engines.Lookup("embedded")
	if err != nil {
		t.Fatal(err)
	}
	spec := engines.Spec{RunID: fmt.Sprintf("t%d", time.Now().UnixNano()), Design: "stream", Producers: 1, Consumers: 1,
		Options: Options{Stream: StreamOptions{Block: 100 * time.Millisecond, GroupStart: "0"}}}
	eng, _ := setUpEngine(t, ctx, reg, spec)
	f := eng.(engines.FactReporter).Facts(ctx)
	if f.Version == "" {
		t.Error("no version in the facts")
	}
	for _, name := range factSettings {
		if _, ok := f.Settings[name]; !ok {
			t.Errorf("facts lack setting %s: %v", name, f.Settings)
		}
	}
}

func TestInfoField(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n"
	for name, want := range map[string]string{"redis_version": "7.0.15", "redis_mode": "standalone", "redis": "", "missing": ""} {
		if got := InfoField(info, name); got != want {
			t.Errorf("InfoField(%q) = %q, want %q", name, got, want)
		}
	}
}
