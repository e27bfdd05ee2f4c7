package scenarios

import (
	"strings"
	"testing"
)

// wait.aof asks for WAITAOF with numlocal 0, the replicas' fsync only; without replicas or
// aof_local it would wait for nothing, which is refused with the key's line.
func TestWaitAOF(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"replicas' fsync", "engine: redis\nrate: 10\nwait:\n  replicas: 1\n  aof: true\n", ""},
		{"local and replicas", "engine: redis\nrate: 10\nwait:\n  replicas: 1\n  aof_local: 1\n", ""},
		{"waits for nothing", "engine: redis\nrate: 10\nwait:\n  aof: true\n", "bad.yaml:4: wait.aof: WAITAOF 0 0 waits for nothing"},
		{"aof_local out of range", "engine: redis\nrate: 10\nwait:\n  aof_local: 2\n", "bad.yaml:4: wait.aof_local: must be 0 or 1 (got 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("bad.yaml", []byte(tc.yaml), testChecks)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(tc.yaml, "aof: true") != sc.Wait.AOF {
					t.Fatalf("wait %+v from %q", sc.Wait, tc.yaml)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
