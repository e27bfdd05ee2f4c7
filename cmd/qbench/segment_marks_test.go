package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines/redisq"
	"qbench/results"
)

// A mark sent to one segment (its --marks-listen) opens a window in that segment alone, and the
// merged result charges it every segment's costs as it would a fault qbench fired: while the
// mark is open the test makes the server refuse writes (min-replicas-to-write 1), and the merged
// mark row counts the failed sends of segment 0 too, which never heard of the mark.
func TestSegmentMarkCostedOverEverySegment(t *testing.T) {
	needRedisServer(t)
	srv, err := redisq.StartRedis(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	sc := writeFile(t, "segmarks.yaml", fmt.Sprintf("name: segmarks\nengine: redis-url\naddress: %s\ndesign: list\nproducers: 2\nconsumers: 2\nrate: 400\nduration: 3s\nwarmup: 0s\ndrain_timeout: 2s\nseed: 9\n", srv.Addr()))
	dir := t.TempDir()
	start := strconv.FormatInt(time.Now().Add(1500*time.Millisecond).UnixMilli(), 10)
	paths := []string{filepath.Join(dir, "segment-0.json"), filepath.Join(dir, "segment-1.json")}
	// Both segments take marks, so both books carry the times the merge charges by (a scenario
	// without faults writes them only then); the test marks segment 1 alone.
	var procs []*exec.Cmd
	var outs []*lockedBuffer
	var addr string
	addrRe := regexp.MustCompile(`taking fault marks at http://([0-9.:]+)/marks`)
	for i := range 2 {
		cmd := exec.Command(qbenchBin, "run", sc, "--segment", fmt.Sprintf("%d/2", i), "--start-at", start, "-q", "-o", paths[i], "--marks-listen", "127.0.0.1:0")
		out := &lockedBuffer{} // stdout's copier and stderr's write to it at once
		cmd.Stdout = out
		errPipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(errPipe)
		var at string
		for at == "" && lines.Scan() {
			if m := addrRe.FindStringSubmatch(lines.Text()); m != nil {
				at = m[1]
			}
		}
		go io.Copy(out, errPipe)
		if i == 1 {
			addr = at
		}
		procs, outs = append(procs, cmd), append(outs, out)
	}
	if addr == "" {
		t.Fatal("segment 1 did not say where it takes marks")
	}
	mark := func(action string) (string, int) {
		stdout, stderr, code := qbench(t, "mark", action, "--to", addr, "--kind", "pod-kill", "--target", "redis-0")
		return stdout + stderr, code
	}
	said, code := mark("start")
	for code == 1 && strings.Contains(said, "no run's load has begun yet") {
		said, code = mark("start")
	}
	if code != 0 {
		t.Fatalf("mark start: exit %d: %s", code, said)
	}
	ctx := context.Background()
	if err := rdb.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	// Writes are refused until both producers have had some refused (40 at 400 msg/s: 0.1 s).
	for {
		info, err := rdb.Info(ctx, "errorstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`errorstat_NOREPLICAS:count=(\d+)`).FindStringSubmatch(info); m != nil {
			if n, _ := strconv.Atoi(m[1]); n >= 80 {
				break
			}
		}
	}
	if err := rdb.ConfigSet(ctx, "min-replicas-to-write", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if said, code := mark("end"); code != 0 {
		t.Fatalf("mark end: exit %d: %s", code, said)
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("segment %d: %v\n%s", i, err, outs[i].String())
		}
	}
	var segs []*results.Result
	for _, p := range paths {
		r, err := results.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, r)
	}
	if len(segs[0].Faults) != 0 || len(segs[1].Faults) != 1 || !segs[1].Faults[0].Marked {
		t.Fatalf("segment 0 windows %+v, segment 1 %+v: want the mark in segment 1 only", segs[0].Faults, segs[1].Faults)
	}
	own := segs[1].Faults[0]
	merged := filepath.Join(dir, "merged.json")
	if _, stderr, code := qbench(t, "merge", "-o", merged, paths[0], paths[1]); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	m, err := results.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Faults) != 1 {
		t.Fatalf("merged windows %+v, want the mark once", m.Faults)
	}
	w := m.Faults[0]
	if !w.Marked || w.Kind != "pod-kill" || w.Target != "redis-0" || w.Segment == nil || *w.Segment != 1 {
		t.Errorf("merged mark row %+v", w)
	}
	if segs[0].Summary.ProduceErrors == 0 || w.ProduceErrors <= own.ProduceErrors || w.ProduceErrors > segs[0].Summary.ProduceErrors+segs[1].Summary.ProduceErrors {
		t.Errorf("merged mark charged %d failed sends, segment 1's own row %d, segments failed %d and %d: want segment 0's added",
			w.ProduceErrors, own.ProduceErrors, segs[0].Summary.ProduceErrors, segs[1].Summary.ProduceErrors)
	}
}

// lockedBuffer is a bytes.Buffer safe for writers on several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
