package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	corev1 "k8s.io/api/core/v1"

	"qbench/engines/server"
	"qbench/results"
)

// pod is one rehearsed pod: its containers' commands as the manifest gives them, run as local
// processes, with the pod's volumes as directories.
type pod struct {
	index int
	dir   string // volumes: DIR/etc-qbench, DIR/results, DIR/gate, DIR/tmp
}

// localArgs makes a container's args run here: Kubernetes' $(JOB_COMPLETION_INDEX) expanded,
// the mount paths mapped to the pod's directories.
func (p pod) localArgs(args []string) []string {
	out := make([]string, len(args))
	// The pods share this machine's network, not one each: their metrics go to a free loopback
	// port, and nothing waits for a scraper after the run.
	r := strings.NewReplacer("$(JOB_COMPLETION_INDEX)", fmt.Sprint(p.index),
		scenarioDir, filepath.Join(p.dir, "etc-qbench"), resultsDir, filepath.Join(p.dir, "results"), gateDir, filepath.Join(p.dir, "gate"),
		"--metrics-addr=0.0.0.0:9464", "--metrics-addr=127.0.0.1:0", "--metrics-linger=30s", "--metrics-linger=0s")
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

func (p pod) command(c *corev1.Container) *exec.Cmd {
	cmd := exec.Command(qbenchBin, p.localArgs(c.Args)...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", p.index))
	return cmd
}

// fakeKubectl answers qbench k8s collect's two kubectl commands from the rehearsed pods: get
// pods names the pod whose hold container runs, exec runs the command with the pod's paths.
const fakeKubectl = `#!/bin/sh
case "$1" in
get)
  idx=$(echo "$*" | sed -n 's/.*job-completion-index=\([0-9]*\).*/\1/p')
  [ -f "$PODS/$idx/holding" ] && echo "pod/seg-$idx"
  exit 0;;
exec)
  idx=${2#pod/seg-}
  shift 5
  last=""
  for a in "$@"; do last=$a; done
  exec "$QBENCH" k8s cat "$(echo "$last" | sed "s#^/results#$PODS/$idx/results#")";;
esac
echo "fake kubectl: $*" >&2
exit 1
`

// The manifest's own container commands, run as local processes against the in-repo server:
// three pods pass the readiness barrier through the engine and start together, one is killed
// mid-run (a lost pod), qbench k8s collect fetches the two results that remain through kubectl
// (a stand-in answering from the pods' directories) and merges them PARTIAL, the lost pod's
// share unknown and not lost, and the tear-down Job's command removes the run's keys.
func TestK8sRehearsalLosesOnePod(t *testing.T) {
	srv := server.New(server.Config{})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	const n, killed, runID = 3, 1, "rehearsal-1"
	scenario := "name: rehearsal\nengine: redis-url\naddress: redis.bench.svc:6379\ndesign: stream\nproducers: 3\nconsumers: 3\nrate: 600\nduration: 2s\nwarmup: 0s\ndrain_timeout: 2s\n"
	file := writeFile(t, "rehearsal.yaml", scenario)
	stdout, stderr, code := qbench(t, "k8s", file, "--segments", fmt.Sprint(n), "--image", "img:1", "--run-id", runID, "--lead", "1500ms", "--barrier-timeout", "20s")
	if code != 0 {
		t.Fatalf("qbench k8s: exit %d: %s", code, stderr)
	}
	docs := decodeStrict(t, stdout)
	secret := docs[0].secret
	seg, teardown := docs[1].job, docs[2].job
	// The pods reach the engine where the cluster's Service would be.
	local := strings.Replace(secret.StringData["scenario.yaml"], "redis.bench.svc:6379", srv.Addr(), 1)
	spec := seg.Spec.Template.Spec
	if names := []string{spec.InitContainers[0].Name, spec.InitContainers[1].Name, spec.Containers[0].Name}; !slices.Equal(names, []string{"barrier", "run", "hold"}) {
		t.Fatalf("segment pod containers %v", names)
	}

	podsDir := t.TempDir()
	pods := make([]pod, n)
	for i := range pods {
		pods[i] = pod{index: i, dir: filepath.Join(podsDir, fmt.Sprint(i))}
		for _, d := range []string{"etc-qbench", "results", "gate", "tmp"} {
			if err := os.MkdirAll(filepath.Join(pods[i].dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(pods[i].dir, "etc-qbench", "scenario.yaml"), []byte(local), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	holds := make([]*exec.Cmd, n)
	errs := make([]string, n)
	var wg sync.WaitGroup
	for i := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := pods[i]
			for _, c := range spec.InitContainers {
				cmd := p.command(&c)
				var buf strings.Builder
				cmd.Stderr = &buf
				if c.Name == "run" && i == killed {
					// Lost mid-run: killed a second after the shared start.
					start, err := parseStartAt("@" + filepath.Join(p.dir, "gate", "start-at"))
					if err != nil {
						errs[i] = err.Error()
						return
					}
					if err := cmd.Start(); err != nil {
						errs[i] = err.Error()
						return
					}
					time.Sleep(time.Until(start.Add(time.Second)))
					cmd.Process.Signal(syscall.SIGKILL)
					cmd.Wait()
					return // the pod failed: hold never runs
				}
				if err := cmd.Run(); err != nil {
					errs[i] = fmt.Sprintf("%s: %v: %s", c.Name, err, buf.String())
					return
				}
			}
			holds[i] = p.command(&spec.Containers[0])
			if err := holds[i].Start(); err != nil {
				errs[i] = err.Error()
				return
			}
			os.WriteFile(filepath.Join(p.dir, "holding"), nil, 0o644)
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Fatalf("pod %d: %s", i, e)
		}
	}

	// Every segment that ran started at the start the barrier wrote into the engine.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	gate, ok, err := gateStart(context.Background(), rdb, runID)
	if err != nil || !ok {
		t.Fatalf("the barrier's start: %v, %v", ok, err)
	}

	kubectlBin := writeFile(t, "kubectl", fakeKubectl)
	os.Chmod(kubectlBin, 0o755)
	merged := filepath.Join(t.TempDir(), "merged.json")
	cmd := exec.Command(qbenchBin, "k8s", "collect", "--run-id", runID, "--segments", fmt.Sprint(n), "--kubectl", kubectlBin, "--dir", t.TempDir(), "-o", merged)
	cmd.Env = append(os.Environ(), "PODS="+podsDir, "QBENCH="+qbenchBin)
	summary, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("collect: %v\n%s", err, summary)
	}
	t.Logf("%s", summary)
	for i, h := range holds {
		if h == nil {
			continue
		}
		// collect marked the result fetched: the pod's hold ends and the pod completes.
		if err := h.Wait(); err != nil {
			t.Errorf("pod %d's hold: %v", i, err)
		}
	}

	m, err := results.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	miss := m.Merged.Missing
	if miss == nil || !slices.Equal(miss.Segments, []int{killed}) || miss.Producers != 1 || miss.Consumers != 1 {
		t.Fatalf("merged.missing %+v: want segment %d, its producer and consumer", miss, killed)
	}
	if !strings.Contains(string(summary), fmt.Sprintf("PARTIAL: segment %d of %d missing", killed, n)) {
		t.Errorf("the summary's headline does not say PARTIAL:\n%s", summary)
	}
	l := m.Summary.Ledger
	// The lost pod's share: about 400 messages scheduled (600/s over 2s, a third), none lost.
	if l.Lost != 0 || miss.Scheduled < 350 || miss.Scheduled > 450 {
		t.Errorf("ledger %+v, missing %+v: want 0 lost and about 400 scheduled messages unknown", l, miss)
	}
	if l.Sent < 700 || l.Sent > 850 || l.Acked != l.Sent {
		t.Errorf("sent %d, acked %d: want the two present producers' 800", l.Sent, l.Acked)
	}
	// Every acknowledged message of the present producers is delivered, queued, lost or
	// unresolved (the lost pod's consumer may have had it), once.
	if got := l.Delivered - l.DeliveredUnacked + l.Queued + l.Lost + miss.Unresolved; got != l.Acked {
		t.Errorf("delivered %d + queued %d + lost %d + unresolved %d != acked %d",
			l.Delivered, l.Queued, l.Lost, miss.Unresolved, l.Acked)
	}
	// Killed a second in, the pod has usually sent messages others received (orphans) and been
	// handed some it never acknowledged (unresolved). Under a loaded machine its run may not
	// have sent or read anything by then: the books above still balance.
	if miss.Unresolved == 0 && miss.OrphanDelivered == 0 {
		t.Logf("the killed pod had sent and read nothing before its kill: no orphan or unresolved message to account")
	}
	if len(m.Segments) != n-1 {
		t.Errorf("%d segments merged", len(m.Segments))
	}
	for _, s := range m.Segments {
		if !s.StartAt.Equal(gate) {
			t.Errorf("segment %d started at %s, the barrier's start %s", s.Index, s.StartAt, gate)
		}
	}
	if v := results.Assess(m); v.Verdict != results.VerdictFlagged {
		t.Errorf("trust verdict %v: a partial merge must be flagged", v.Verdict)
	}

	// The tear-down Job's command, its wait for the run's time cut short.
	td := teardown.Spec.Template.Spec.Containers[0]
	args := pods[0].localArgs(td.Args)
	for i, a := range args {
		if strings.HasPrefix(a, "--after=") {
			args[i] = "--after=0s"
		}
	}
	if _, stderr, code := qbench(t, args...); code != 0 {
		t.Fatalf("teardown: exit %d: %s", code, stderr)
	}
	if keys, _ := rdb.Keys(context.Background(), "qbench:*").Result(); len(keys) != 0 {
		t.Errorf("keys left after the tear-down: %v", keys)
	}
}
