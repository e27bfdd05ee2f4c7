package redisq

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"qbench/engines"
	"qbench/engines/server"
)

func TestParseAddress(t *testing.T) {
	cases := []struct {
		in, addr, password string
		tls                bool
	}{
		{"127.0.0.1:6379", "127.0.0.1:6379", "", false},
		{"redis://:s3cret@127.0.0.1:6380/0", "127.0.0.1:6380", "s3cret", false},
		{"rediss://user:pw@127.0.0.1:6381", "127.0.0.1:6381", "pw", true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			o, err := parseAddress(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if o.Addr != c.addr || o.Password != c.password || (o.TLSConfig != nil) != c.tls {
				t.Fatalf("got addr %q password %q tls %v", o.Addr, o.Password, o.TLSConfig != nil)
			}
		})
	}
	// A bad URL's error must not repeat the password.
	_, err := parseAddress("redis://:s3cret@127.0.0.1:6380/notanumber")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error %v", err)
	}
}

// needLossy skips (fails under CI=true) without what lossyfs needs.
func needLossy(t *testing.T) {
	t.Helper()
	_, errFuse := exec.LookPath("fusermount3")
	_, errDev := os.Stat("/dev/fuse")
	if os.Geteuid() != 0 || errFuse != nil || errDev != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root, /dev/fuse and fusermount3 (fuse3)")
		}
		t.Skip("needs root, /dev/fuse and fusermount3 (fuse3)")
	}
}

// Each target's engine claims, by interface assertion, exactly the capabilities it has: a
// fault the target cannot carry out is not a method that fails at run time.
func TestTargetsClaimExactlyTheirCapabilities(t *testing.T) {
	s := server.New(server.Config{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cases := []struct {
		name, target string
		spec         engines.Spec
		redis, lossy bool
		want         []string
	}{
		{"embedded", "embedded", engines.Spec{}, false, false, []string{"stall", "command", "in-process"}},
		{"redis-url", "redis-url", engines.Spec{Address: s.Addr()}, false, false, []string{"stall", "command", "leader-move"}},
		{"server", "server", engines.Spec{}, false, false, []string{"stall", "command", "crash"}},
		{"server on lossyfs", "server", engines.Spec{LossyFS: true}, false, true, []string{"stall", "command", "crash", "disk-full"}},
		{"redis", "redis", engines.Spec{}, true, false, []string{"stall", "command", "crash"}},
		{"redis on lossyfs", "redis", engines.Spec{LossyFS: true}, true, true, []string{"stall", "command", "crash", "disk-full"}},
		{"redis with a replica", "redis", engines.Spec{Replicas: 1}, true, false, []string{"stall", "command", "crash", "failover"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.redis {
				needRedis(t)
			}
			if c.lossy {
				needLossy(t)
			}
			reg, err := engines.Lookup(c.target)
			if err != nil {
				t.Fatal(err)
			}
			spec := c.spec
			spec.RunID, spec.Design, spec.Producers, spec.Consumers = "caps", "stream", 1, 1
			eng, err := reg.New(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			var got []string
			if _, ok := eng.(engines.Staller); ok {
				got = append(got, "stall")
			}
			if _, ok := eng.(engines.Commander); ok {
				got = append(got, "command")
			}
			if p, ok := eng.(engines.InProcess); ok && p.InProcess() {
				got = append(got, "in-process")
			}
			if _, ok := eng.(engines.Crasher); ok {
				got = append(got, "crash")
			}
			if _, ok := eng.(engines.DiskFiller); ok {
				got = append(got, "disk-full")
			}
			if _, ok := eng.(engines.FailoverTarget); ok {
				got = append(got, "failover")
			}
			if _, ok := eng.(engines.LeaderMover); ok {
				got = append(got, "leader-move")
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Fatalf("capabilities %v, want %v", got, c.want)
			}
			// Every other engine the runner relies on still comes through the embedding.
			if _, ok := eng.(engines.Sweeper); !ok {
				t.Error("not a Sweeper")
			}
			if _, ok := eng.(engines.FactReporter); !ok {
				t.Error("not a FactReporter")
			}
		})
	}
}
