package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// diffRedisVersion is the redis-server the differential tests compare with: Debian bookworm's.
// Replies, error texts and encodings change between Redis releases, so a byte-identical
// comparison against another version fails (or passes) for reasons that are not ours.
const diffRedisVersion = "7.0.15"

var (
	redisVersionOnce  sync.Once
	redisVersionFound string
)

var redisVersionRE = regexp.MustCompile(`\bv=(\d+\.\d+\.\d+)\b`)

// redisVersionOf reads the version out of `redis-server --version` ("Redis server v=7.0.15
// sha=..."); "" when there is none.
func redisVersionOf(out string) string {
	if m := redisVersionRE.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// differentialRedis is the redis-server to compare with. One that is missing, or of another
// version than diffRedisVersion, fails the test under CI=true and skips it elsewhere, with a
// message naming the version found and the one needed.
func differentialRedis(t testing.TB) string {
	t.Helper()
	stop := t.Skipf
	if os.Getenv("CI") == "true" {
		stop = t.Fatalf
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		stop("differential tests need redis-server %s (Debian bookworm's); none found: %v", diffRedisVersion, err)
		return ""
	}
	redisVersionOnce.Do(func() {
		out, err := exec.Command(path, "--version").Output()
		redisVersionFound = redisVersionOf(string(out))
		if redisVersionFound == "" {
			redisVersionFound = "unknown (" + strings.TrimSpace(string(out)) + errText(err) + ")"
		}
	})
	if redisVersionFound != diffRedisVersion {
		stop("differential tests need redis-server %s (Debian bookworm's); %s is %s", diffRedisVersion, path, redisVersionFound)
		return ""
	}
	return path
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRedisVersionOf(t *testing.T) {
	cases := []struct{ out, want string }{
		{"Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=ae4d7c971a948f0\n", "7.0.15"},
		{"Redis server v=7.2.4 sha=00000000:0 malloc=libc bits=64 build=1\n", "7.2.4"},
		{"Redis server v=7.0.150 sha=0\n", "7.0.150"}, // not mistaken for 7.0.15
		{"redis-server: command not found", ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := redisVersionOf(c.out); got != c.want {
			t.Errorf("redisVersionOf(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}

// pinChildEnv makes TestDifferentialRedisPinned, run as a child, only ask differentialRedis.
const pinChildEnv = "QBENCH_TEST_PIN_CHILD"

// A redis-server of another version fails a differential test under CI=true and skips it
// elsewhere, naming the version found and the one needed; the pinned version passes. The test
// binary runs itself with a fake redis-server (a shell script) first on PATH.
func TestDifferentialRedisPinned(t *testing.T) {
	if os.Getenv(pinChildEnv) != "" {
		differentialRedis(t)
		return
	}
	cases := []struct {
		name, version, ci string
		fails             bool
		want              string
	}{
		{"another version under CI", "7.2.4", "true", true, "differential tests need redis-server 7.0.15 (Debian bookworm's); FAKE is 7.2.4"},
		{"another version elsewhere", "7.2.4", "", false, "--- SKIP"},
		{"the pinned version", "7.0.15", "true", false, "--- PASS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			fake := filepath.Join(dir, "redis-server")
			script := "#!/bin/sh\necho 'Redis server v=" + c.version + " sha=00000000:0 malloc=libc bits=64 build=0'\n"
			if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestDifferentialRedisPinned$", "-test.v")
			cmd.Env = append(os.Environ(), pinChildEnv+"=1", "PATH="+dir, "CI="+c.ci)
			out, err := cmd.CombinedOutput()
			if (err != nil) != c.fails {
				t.Fatalf("child error %v, want failure %v:\n%s", err, c.fails, out)
			}
			want := strings.ReplaceAll(c.want, "FAKE", fake)
			if !strings.Contains(string(out), want) {
				t.Fatalf("child output lacks %q:\n%s", want, out)
			}
			if c.version != diffRedisVersion && !strings.Contains(string(out), "is "+c.version) {
				t.Fatalf("child output does not name the version found:\n%s", out)
			}
		})
	}
}
