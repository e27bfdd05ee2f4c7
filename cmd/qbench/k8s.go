package main

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"qbench/bench"
	"qbench/scenarios"
)

// qbench k8s prints the manifests that run a scenario's segments on a Kubernetes cluster: the
// scheduler is Kubernetes' own (an Indexed Job: one pod per segment, the segment from
// JOB_COMPLETION_INDEX), not one of qbench's. The readiness barrier goes through the engine
// (k8sbarrier.go), the results stay in each pod until qbench k8s collect fetches them
// (k8scollect.go), and the types emitted are in k8stypes.go.

// k8sOptions are qbench k8s's inputs.
type k8sOptions struct {
	Segments int
	Image    string
	// StartAt is an absolute shared start; zero: the readiness barrier decides it.
	StartAt time.Time
	// Now is when the manifests are made: the run ID's default derives from it.
	Now       time.Time
	RunID     string
	Name      string
	Namespace string
	// ResultsClaim names an existing ReadWriteMany claim; RWX emits one. Either puts the results
	// on a shared volume and adds a merge Job; neither keeps each in its pod (collect).
	ResultsClaim string
	RWX          bool
	Storage      string
	StorageClass string
	CPU, Memory  string
	// BarrierTimeout is how long the barrier waits for every segment to be ready before the
	// ones ready start without the others; Lead is how long after the release they start.
	BarrierTimeout, Lead time.Duration
	Hold                 time.Duration
	// MetricsPort is where each segment's run serves its live Prometheus metrics (0: none),
	// announced to scrapers by the pod's prometheus.io annotations.
	MetricsPort int
	MergeWait   time.Duration
	TTL         time.Duration
}

const (
	scenarioDir = "/etc/qbench"
	resultsDir  = "/results"
	gateDir     = "/gate"
	// k8sMargin is how long after the scenario's own end (warm-up, duration, drain) the
	// tear-down waits: the segments' settle and final sweep.
	k8sMargin = 2 * time.Minute
	// k8sShortStart is how far ahead an absolute start should be for pods to pull an image and
	// start: less is warned about.
	k8sShortStart = 2 * time.Minute
)

func k8sCmd() *cobra.Command {
	var o k8sOptions
	var startAt string
	cmd := &cobra.Command{
		Use:   "k8s SCENARIO.yaml --segments N --image IMAGE",
		Short: "Print Kubernetes manifests that run a scenario as N segments from N pods (an Indexed Job); collect merges them",
		Long: `k8s prints, on stdout, manifests for kubectl apply -f -:

  a Secret holding the scenario file (its address and password included);
  an Indexed Job of N pods (completionMode: Indexed), each with
    init container barrier: waits until every segment is ready, through the engine itself
      (Redis keys qbench:RUN:gate:*), then writes the shared start (--lead after the release);
    init container run: qbench run --segment=$(JOB_COMPLETION_INDEX)/N --start-at=@FILE,
      with --cpu and --memory as its requests and limits, writing its result to an emptyDir;
    container hold: keeps the result until qbench k8s collect has fetched it (or --hold ends);
  a tear-down Job that removes the run's keys or topic from the engine once the run's time is
    over, whether the segments succeeded or not.

Every object's name ends with a suffix of the run ID: a new run never collides with an old one.
A segment whose pod fails before the start is retried; one that cannot start with the others
(its start passed, exit 2) is marked failed for its index alone, and the run goes on without it.
Then qbench k8s collect --run-id RUN --segments N fetches the results through kubectl exec and
merges them; a missing segment makes the merge PARTIAL (its share unknown, never lost).

With --results-claim (an existing ReadWriteMany claim) or --rwx (emit one), the segments write
to that volume instead and a merge Job merges them there (--allow-missing).

The barrier needs engine redis-url; for other engines give --start-at, an absolute start far
enough ahead for every pod to pull the image and start. The engine must be reachable from the
pods: a loopback address is refused (exit 2).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := loadScenario(args[0])
			if err != nil {
				return err
			}
			raw, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			o.Now = time.Now()
			if startAt != "" {
				if o.StartAt, err = parseStartAt(startAt); err != nil {
					return usageError{err}
				}
			}
			out, err := k8sManifests(sc, raw, o)
			if err != nil {
				return err
			}
			if ahead := o.StartAt.Sub(o.Now); !o.StartAt.IsZero() && ahead < k8sShortStart {
				fmt.Fprintf(os.Stderr, "qbench: warning: --start-at is only %s ahead: a pod whose image pull or scheduling takes longer misses its share (the barrier, on redis-url, has no such limit)\n", ahead.Round(time.Second))
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Segments, "segments", 0, "the number of segments (pods)")
	f.StringVar(&o.Image, "image", "", "a container image with qbench on its PATH (build it from the repository's Dockerfile)")
	f.StringVar(&startAt, "start-at", "", "an absolute shared start (RFC 3339 or unix ms) instead of the readiness barrier; needed for engines other than redis-url")
	f.StringVar(&o.RunID, "run-id", "", "the run ID (names keys, topics and objects); default: derived from the scenario and the time of generation")
	f.StringVar(&o.Name, "name", "", "the objects' name prefix (default: qbench-SCENARIO); a suffix of the run ID follows it")
	f.StringVar(&o.Namespace, "namespace", "", "the namespace of every object (default: kubectl's)")
	f.StringVar(&o.CPU, "cpu", "1", "each segment's CPU request and limit (a Kubernetes quantity: 1, 500m)")
	f.StringVar(&o.Memory, "memory", "1Gi", "each segment's memory request and limit (a Kubernetes quantity: 1Gi, 512Mi)")
	f.DurationVar(&o.BarrierTimeout, "barrier-timeout", 10*time.Minute, "how long the barrier waits for every segment to be ready; then the ready ones start without the rest")
	f.DurationVar(&o.Lead, "lead", 10*time.Second, "how long after the barrier's release the segments start")
	f.DurationVar(&o.Hold, "hold", 2*time.Hour, "how long a segment's pod keeps its result for qbench k8s collect after its run")
	f.IntVar(&o.MetricsPort, "metrics-port", 9464, "the port each segment serves live Prometheus metrics on, with the pod's prometheus.io scrape annotations (0: no metrics)")
	f.DurationVar(&o.TTL, "ttl", 24*time.Hour, "how long finished Jobs stay before Kubernetes deletes them (ttlSecondsAfterFinished)")
	f.StringVar(&o.ResultsClaim, "results-claim", "", "an existing ReadWriteMany PersistentVolumeClaim for the results, with a merge Job, instead of collect")
	f.BoolVar(&o.RWX, "rwx", false, "emit a ReadWriteMany claim for the results, with a merge Job, instead of collect")
	f.StringVar(&o.Storage, "results-size", "1Gi", "the size of the claim --rwx emits")
	f.StringVar(&o.StorageClass, "storage-class", "", "the storage class of the claim --rwx emits (one that offers ReadWriteMany)")
	f.DurationVar(&o.MergeWait, "merge-wait", 0, "with a results claim: how long the merge Job waits for the segments' results (default: the barrier timeout and the run's length, plus 5m)")
	cmd.AddCommand(k8sBarrierCmd(), k8sHoldCmd(), k8sCatCmd(), k8sCollectCmd(), k8sTeardownCmd())
	return cmd
}

var k8sNameRe = regexp.MustCompile(`[^a-z0-9-]+`)

// k8sName makes s a DNS-1123 label short enough, with the run suffix and the Job's own suffixes,
// for an Indexed Job's pod host names (JOB-NAME-INDEX, 63 at most).
func k8sName(s string) string {
	s = strings.Trim(k8sNameRe.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 32 {
		s = strings.TrimRight(s[:32], "-")
	}
	if s == "" {
		s = "qbench"
	}
	return s
}

// runSuffix is the part of every object's name that makes it the run's own.
func runSuffix(runID string) string {
	h := fnv.New32a()
	h.Write([]byte(runID))
	return fmt.Sprintf("%06x", h.Sum32()&0xffffff)
}

var labelValueRe = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

var quantityRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$`)

// loopbackAddress reports the host of a scenario address that is the pod itself inside a pod.
func loopbackAddress(addr string) (string, bool) {
	var hosts []string
	for _, a := range strings.Split(addr, ",") {
		a = strings.TrimSpace(a)
		if strings.Contains(a, "://") {
			if u, err := url.Parse(a); err == nil {
				hosts = append(hosts, u.Hostname())
			}
			continue
		}
		if h, _, err := net.SplitHostPort(a); err == nil {
			hosts = append(hosts, h)
		} else {
			hosts = append(hosts, a)
		}
	}
	for _, h := range hosts {
		if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
			return h, true
		}
		if ip := net.ParseIP(h); ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
			return h, true
		}
	}
	return "", false
}

// barrierEngine says whether the readiness barrier can go through sc's engine.
func barrierEngine(sc *scenarios.Scenario) bool { return sc.Engine == "redis-url" }

// k8sCheck refuses (exit 2) options that would not run as generated.
func k8sCheck(sc *scenarios.Scenario, o *k8sOptions) error {
	if o.Segments < 1 {
		return errors.New("--segments N is required (N >= 1)")
	}
	if o.Image == "" {
		return errors.New("--image is required: an image with qbench on its PATH (docker build -t REGISTRY/qbench:TAG . at the repository's root, then push it)")
	}
	if h, ok := loopbackAddress(sc.Address); ok {
		return fmt.Errorf("the scenario's address %s is a loopback address: inside a pod it is the pod itself; give the engine's address as the pods reach it (a Service name)", h)
	}
	if !o.StartAt.IsZero() && !o.StartAt.After(o.Now) {
		return fmt.Errorf("--start-at %s is in the past: the pods would refuse to start", o.StartAt.UTC().Format(time.RFC3339))
	}
	if o.StartAt.IsZero() && !barrierEngine(sc) {
		return fmt.Errorf("engine %s has no readiness barrier (redis-url has): give --start-at, far enough ahead for every pod to pull the image and start", sc.Engine)
	}
	for flag, q := range map[string]string{"--cpu": o.CPU, "--memory": o.Memory, "--results-size": o.Storage} {
		if !quantityRe.MatchString(q) {
			return fmt.Errorf("%s %q: want a Kubernetes quantity (1, 500m, 1Gi)", flag, q)
		}
	}
	if o.RunID != "" && !labelValueRe.MatchString(o.RunID) {
		return fmt.Errorf("--run-id %q: it is a Kubernetes label value: 63 characters at most, letters, digits, '-', '_', '.', starting and ending with a letter or digit", o.RunID)
	}
	if o.ResultsClaim != "" && o.RWX {
		return errors.New("--results-claim names an existing claim; --rwx emits one: give one of them")
	}
	if o.MetricsPort < 0 || o.MetricsPort > 65535 {
		return fmt.Errorf("--metrics-port must be 0 (no metrics) to 65535 (got %d)", o.MetricsPort)
	}
	if o.BarrierTimeout <= 0 || o.Lead <= 0 || o.Hold <= 0 {
		return errors.New("--barrier-timeout, --lead and --hold must be positive")
	}
	start := o.StartAt
	if start.IsZero() {
		start = o.Now.Add(time.Hour) // any future instant: CheckSegment only needs one
	}
	for i := range o.Segments {
		if err := bench.CheckSegment(sc, bench.SegmentOptions{Index: i, Count: o.Segments, StartAt: start}); err != nil {
			return err
		}
	}
	return nil
}

// k8sManifests is the stream of manifests qbench k8s prints.
func k8sManifests(sc *scenarios.Scenario, scenarioFile []byte, o k8sOptions) ([]byte, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if err := k8sCheck(sc, &o); err != nil {
		return nil, usageError{err}
	}
	runID := o.RunID
	switch {
	case runID != "":
	case o.StartAt.IsZero():
		runID = bench.SegmentRunID(sc, o.Now.Truncate(time.Millisecond))
	default:
		runID = bench.SegmentRunID(sc, o.StartAt)
	}
	prefix := k8sName(o.Name)
	if o.Name == "" {
		prefix = k8sName("qbench-" + sc.Name)
	}
	name := prefix + "-" + runSuffix(runID)
	barrier := o.StartAt.IsZero()
	shared := o.ResultsClaim != "" || o.RWX
	claim := o.ResultsClaim
	if o.RWX {
		claim = name + "-results"
	}
	runLength := sc.Warmup.D() + sc.Duration.D() + sc.DrainTimeout.D() + k8sMargin
	n := o.Segments
	ttl := int(o.TTL.Seconds())

	labels := func(role string) map[string]string {
		l := map[string]string{"app.kubernetes.io/name": "qbench", "qbench/run": runID}
		if role != "" {
			l["qbench/role"] = role
		}
		return l
	}
	meta := func(suffix, role string) k8sMeta {
		return k8sMeta{Name: name + suffix, Namespace: o.Namespace, Labels: labels(role)}
	}
	scenarioPath := scenarioDir + "/scenario.yaml"
	startFile := gateDir + "/start-at"
	segmentFile := func(i string) string { return fmt.Sprintf("%s/%s-segment-%s.json", resultsDir, runID, i) }
	index := "$(JOB_COMPLETION_INDEX)" // Kubernetes expands it in args: no shell in the image
	scenarioMount := volumeMount{Name: "scenario", MountPath: scenarioDir, ReadOnly: true}
	resultsMount := volumeMount{Name: "results", MountPath: resultsDir}
	tmpMount := volumeMount{Name: "tmp", MountPath: "/tmp"}
	small := resources{Requests: map[string]string{"cpu": "10m", "memory": "32Mi"}, Limits: map[string]string{"memory": "128Mi"}}
	qb := func(cname string, res resources, mounts []volumeMount, args ...string) container {
		return container{Name: cname, Image: o.Image, Command: []string{"qbench"}, Args: args, Resources: res,
			SecurityContext: &securityContext{Capabilities: capabilities{Drop: []string{"ALL"}}, ReadOnlyRootFilesystem: true}, VolumeMounts: mounts}
	}
	podSecurity := &podSecurityContext{RunAsNonRoot: true, SeccompProfile: &seccompProfile{Type: "RuntimeDefault"}}
	resultsVolume := volume{Name: "results", EmptyDir: &emptyDirSource{}}
	if shared {
		resultsVolume = volume{Name: "results", PersistentVolumeClaim: &claimRef{ClaimName: claim}}
	}
	volumes := []volume{{Name: "scenario", Secret: &secretRef{SecretName: name + "-scenario"}}, resultsVolume, {Name: "tmp", EmptyDir: &emptyDirSource{}}}

	docs := []k8sObject{{APIVersion: "v1", Kind: "Secret", Metadata: meta("-scenario", ""), Type: "Opaque",
		StringData: map[string]string{"scenario.yaml": string(scenarioFile)}}}
	if o.RWX {
		var class *string
		if o.StorageClass != "" {
			class = &o.StorageClass
		}
		docs = append(docs, k8sObject{APIVersion: "v1", Kind: "PersistentVolumeClaim", Metadata: meta("-results", ""),
			Spec: pvcSpec{AccessModes: []string{"ReadWriteMany"}, StorageClassName: class, Resources: pvcResources{Requests: map[string]string{"storage": o.Storage}}}})
	}

	// The segments' pod: barrier, run, hold.
	var inits []container
	start := "--start-at=" + o.StartAt.UTC().Format(time.RFC3339Nano)
	if barrier {
		volumes = append(volumes, volume{Name: "gate", EmptyDir: &emptyDirSource{}})
		inits = append(inits, qb("barrier", small, []volumeMount{scenarioMount, {Name: "gate", MountPath: gateDir}},
			"k8s", "barrier", scenarioPath, "--run-id="+runID, fmt.Sprintf("--segment=%s/%d", index, n),
			"--timeout="+o.BarrierTimeout.String(), "--lead="+o.Lead.String(), "--out="+startFile))
		start = "--start-at=@" + startFile
	}
	runMounts := []volumeMount{scenarioMount, resultsMount, tmpMount}
	if barrier {
		runMounts = append(runMounts, volumeMount{Name: "gate", MountPath: gateDir, ReadOnly: true})
	}
	runArgs := []string{"run", scenarioPath, fmt.Sprintf("--segment=%s/%d", index, n), start, "--run-id=" + runID, "--quiet", "--output=" + segmentFile(index)}
	podMeta := k8sMeta{Labels: labels("segment")}
	if o.MetricsPort > 0 {
		// The pod's own network namespace: the scraper reaches it at the pod's address. The
		// linger covers a scrape interval or two after the run, so the final figures are seen.
		runArgs = append(runArgs, fmt.Sprintf("--metrics-addr=0.0.0.0:%d", o.MetricsPort), "--metrics-linger=30s")
		podMeta.Annotations = map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": fmt.Sprint(o.MetricsPort), "prometheus.io/path": "/metrics"}
	}
	run := qb("run", resources{Requests: map[string]string{"cpu": o.CPU, "memory": o.Memory}, Limits: map[string]string{"cpu": o.CPU, "memory": o.Memory}}, runMounts, runArgs...)
	if o.MetricsPort > 0 {
		run.Ports = []containerPort{{Name: "metrics", ContainerPort: o.MetricsPort, Protocol: "TCP"}}
	}
	var containers []container
	if shared {
		containers = []container{run}
	} else {
		// The run is an init container so that hold starts only after it succeeded; a failed
		// run fails the pod, and the failure policy below decides.
		inits = append(inits, run)
		containers = []container{qb("hold", small, []volumeMount{resultsMount}, "k8s", "hold", segmentFile(index), "--for="+o.Hold.String())}
	}
	perIndex := 1
	docs = append(docs, k8sObject{APIVersion: "batch/v1", Kind: "Job", Metadata: meta("-segments", "segment"), Spec: jobSpec{
		CompletionMode: "Indexed", Completions: &n, Parallelism: &n,
		// A pod that fails is retried once, for its index alone: before the start it joins the
		// others; after it, the barrier or the run refuses with exit 2 and the rule below marks
		// the index failed at once. An eviction or preemption does not count as a try.
		BackoffLimitPerIndex: &perIndex,
		PodFailurePolicy: &podFailurePolicy{Rules: []podFailureRule{
			{Action: "FailIndex", OnExitCodes: &onExitCodes{Operator: "In", Values: []int{exitUsage}}},
			{Action: "Ignore", OnPodConditions: []onPodCondition{{Type: "DisruptionTarget", Status: "True"}}},
		}},
		TTLSecondsAfterFinished: &ttl,
		Template: podTemplate{Metadata: podMeta, Spec: podSpec{
			RestartPolicy:   "Never",
			SecurityContext: podSecurity,
			// One segment per machine where the cluster has machines enough: the point is to
			// load the engine from several.
			TopologySpreadConstraints: []topologySpread{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: "ScheduleAnyway",
				LabelSelector: labelSelector{MatchLabels: labels("segment")}}},
			InitContainers: inits,
			Containers:     containers,
			Volumes:        volumes,
		}},
	}})

	// The tear-down waits for the run's time to be over, not for the segments' success: it runs
	// whatever happened to them.
	backoff := 3
	tdArgs := []string{"k8s", "teardown", scenarioPath, "--run-id=" + runID, "--after=" + runLength.String()}
	if barrier {
		tdArgs = append(tdArgs, "--barrier-timeout="+(o.BarrierTimeout+o.Lead).String())
	} else {
		tdArgs = append(tdArgs, start)
	}
	docs = append(docs, k8sObject{APIVersion: "batch/v1", Kind: "Job", Metadata: meta("-teardown", "teardown"), Spec: jobSpec{
		BackoffLimit: &backoff, TTLSecondsAfterFinished: &ttl,
		Template: podTemplate{Metadata: k8sMeta{Labels: labels("teardown")}, Spec: podSpec{
			RestartPolicy: "OnFailure", SecurityContext: podSecurity,
			Containers: []container{qb("teardown", small, []volumeMount{scenarioMount, tmpMount}, tdArgs...)},
			Volumes:    []volume{volumes[0], volumes[2]},
		}},
	}})

	wait := o.MergeWait
	if wait <= 0 {
		wait = (runLength + 5*time.Minute).Round(time.Minute)
		if barrier {
			wait += o.BarrierTimeout + o.Lead
		} else {
			wait += o.StartAt.Sub(o.Now).Round(time.Minute)
		}
	}
	merged := fmt.Sprintf("%s/%s-merged.json", resultsDir, runID)
	if shared {
		mergeArgs := []string{"merge", "--wait=" + wait.String(), "--allow-missing"}
		for i := range n {
			mergeArgs = append(mergeArgs, segmentFile(fmt.Sprint(i)))
		}
		mergeArgs = append(mergeArgs, "--output="+merged)
		docs = append(docs, k8sObject{APIVersion: "batch/v1", Kind: "Job", Metadata: meta("-merge", "merge"), Spec: jobSpec{
			BackoffLimit: &backoff, TTLSecondsAfterFinished: &ttl,
			Template: podTemplate{Metadata: k8sMeta{Labels: labels("merge")}, Spec: podSpec{
				RestartPolicy: "OnFailure", SecurityContext: podSecurity,
				Containers: []container{qb("merge", small, []volumeMount{resultsMount, tmpMount}, mergeArgs...)},
				Volumes:    []volume{resultsVolume, volumes[2]},
			}},
		}})
	}

	var buf bytes.Buffer
	ns := ""
	if o.Namespace != "" {
		ns = " -n " + commentSafe(o.Namespace)
	}
	// The header is the one place text goes out unencoded: each value is kept on its comment line.
	fmt.Fprintf(&buf, "# qbench k8s: %d segments of %s, run %s.\n", n, commentSafe(sc.Name), commentSafe(runID))
	if barrier {
		fmt.Fprintf(&buf, "# Start: %s after every segment is ready (readiness barrier through the engine), or after %s with those ready.\n", o.Lead, o.BarrierTimeout)
	} else {
		fmt.Fprintf(&buf, "# Start: at %s (absolute: no readiness barrier; a pod not running by then misses its share).\n", o.StartAt.UTC().Format(time.RFC3339Nano))
	}
	fmt.Fprintf(&buf, "#   kubectl apply%s -f THIS_FILE\n", ns)
	if shared {
		fmt.Fprintf(&buf, "#   kubectl wait%s --for=condition=complete job/%s-merge --timeout=%s\n", ns, name, wait+time.Minute)
		fmt.Fprintf(&buf, "#   then copy %s off the %s volume.\n", commentSafe(merged), commentSafe(claim))
	} else {
		fmt.Fprintf(&buf, "#   qbench k8s collect --run-id %s --segments %d%s -o %s-merged.json\n", commentSafe(runID), n, strings.Replace(ns, "-n", "--namespace", 1), commentSafe(runID))
	}
	fmt.Fprintf(&buf, "#   kubectl delete%s job,secret -l qbench/run=%s\n", ns, commentSafe(runID))
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// commentSafe keeps s on one YAML comment line: a line break in it (the loader refuses one in a
// scenario's name, --results-claim does not) would start YAML of its own, an object kubectl
// applies. Control characters and Unicode line breaks become '?'.
func commentSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 {
			return '?'
		}
		return r
	}, s)
}
