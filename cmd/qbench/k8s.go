package main

import (
	"bytes"
	"errors"
	"fmt"
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
// JOB_COMPLETION_INDEX), not one of qbench's. The structs below are the subset of the batch/v1
// Job, v1 ConfigMap and v1 PersistentVolumeClaim fields qbench emits, with the API's field names;
// TestK8sManifestFieldsAreJobFields checks them against the API's schema.

type k8sObject struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   k8sMeta           `yaml:"metadata"`
	Data       map[string]string `yaml:"data,omitempty"`
	Spec       any               `yaml:"spec,omitempty"`
}

type k8sMeta struct {
	Name      string            `yaml:"name,omitempty"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
}

type jobSpec struct {
	CompletionMode string      `yaml:"completionMode,omitempty"`
	Completions    *int        `yaml:"completions,omitempty"`
	Parallelism    *int        `yaml:"parallelism,omitempty"`
	BackoffLimit   int         `yaml:"backoffLimit"`
	Template       podTemplate `yaml:"template"`
}

type podTemplate struct {
	Metadata k8sMeta `yaml:"metadata"`
	Spec     podSpec `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy             string           `yaml:"restartPolicy"`
	TopologySpreadConstraints []topologySpread `yaml:"topologySpreadConstraints,omitempty"`
	InitContainers            []container      `yaml:"initContainers,omitempty"`
	Containers                []container      `yaml:"containers"`
	Volumes                   []volume         `yaml:"volumes"`
}

type topologySpread struct {
	MaxSkew           int           `yaml:"maxSkew"`
	TopologyKey       string        `yaml:"topologyKey"`
	WhenUnsatisfiable string        `yaml:"whenUnsatisfiable"`
	LabelSelector     labelSelector `yaml:"labelSelector"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type container struct {
	Name         string        `yaml:"name"`
	Image        string        `yaml:"image"`
	Command      []string      `yaml:"command"`
	Args         []string      `yaml:"args"`
	VolumeMounts []volumeMount `yaml:"volumeMounts"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type volume struct {
	Name                  string        `yaml:"name"`
	ConfigMap             *configMapRef `yaml:"configMap,omitempty"`
	PersistentVolumeClaim *claimRef     `yaml:"persistentVolumeClaim,omitempty"`
}

type configMapRef struct {
	Name string `yaml:"name"`
}

type claimRef struct {
	ClaimName string `yaml:"claimName"`
}

type pvcSpec struct {
	AccessModes []string     `yaml:"accessModes"`
	Resources   pvcResources `yaml:"resources"`
}

type pvcResources struct {
	Requests map[string]string `yaml:"requests"`
}

// k8sOptions are qbench k8s's inputs.
type k8sOptions struct {
	Segments     int
	Image        string
	StartAt      time.Time
	Name         string
	Namespace    string
	ResultsClaim string // an existing claim; empty: emit one
	Storage      string
	MergeWait    time.Duration
}

const (
	scenarioDir = "/etc/qbench"
	resultsDir  = "/results"
)

func k8sCmd() *cobra.Command {
	var o k8sOptions
	var startAt string
	cmd := &cobra.Command{
		Use:   "k8s SCENARIO.yaml --segments N --image IMAGE",
		Short: "Print Kubernetes manifests that run a scenario as N segments from N pods (an Indexed Job) and merge them",
		Long: `k8s prints, on stdout, manifests for kubectl apply -f -:

  a ConfigMap holding the scenario file;
  a PersistentVolumeClaim for the results (ReadWriteMany: the pods may land on different nodes),
    unless --results-claim names an existing one;
  an Indexed Job of N pods (completionMode: Indexed), each running
    qbench run --segment=$(JOB_COMPLETION_INDEX)/N --start-at=T --run-id=ID,
    spread over nodes, writing ID-segment-i.json to the results volume;
  a merge Job whose init container waits for the N results and merges them into ID-merged.json,
    then removes the run's keys or topic from the engine (qbench run --teardown-only).

The scenario's engine must be one every pod connects to (redis-url, kafka-url), reachable from
the pods. The image must have qbench on its PATH. Every pod must be running before the start
time: a segment started more than a second after it refuses to run.`,
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
			if startAt == "" {
				o.StartAt = time.Now().Add(2 * time.Minute).Truncate(time.Second)
			} else if o.StartAt, err = parseStartAt(startAt); err != nil {
				return usageError{err}
			}
			out, err := k8sManifests(sc, raw, o)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().IntVar(&o.Segments, "segments", 0, "the number of segments (pods)")
	cmd.Flags().StringVar(&o.Image, "image", "", "a container image with qbench on its PATH")
	cmd.Flags().StringVar(&startAt, "start-at", "", "the shared start instant (RFC 3339 or unix ms); default: two minutes from now")
	cmd.Flags().StringVar(&o.Name, "name", "", "the Jobs' name prefix (default: qbench-SCENARIO)")
	cmd.Flags().StringVar(&o.Namespace, "namespace", "", "the namespace of every object (default: kubectl's)")
	cmd.Flags().StringVar(&o.ResultsClaim, "results-claim", "", "an existing ReadWriteMany PersistentVolumeClaim for the results (default: one is emitted)")
	cmd.Flags().StringVar(&o.Storage, "results-size", "1Gi", "the size of the emitted results claim")
	cmd.Flags().DurationVar(&o.MergeWait, "merge-wait", 0, "how long the merge waits for the segments' results (default: until the start, plus the scenario's duration and drain timeout, plus 5m)")
	return cmd
}

var k8sNameRe = regexp.MustCompile(`[^a-z0-9-]+`)

// k8sName makes s a DNS-1123 label short enough for an Indexed Job's pod host names
// (JOB-NAME-INDEX, 63 at most).
func k8sName(s string) string {
	s = strings.Trim(k8sNameRe.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "qbench"
	}
	return s
}

// k8sManifests is the stream of manifests qbench k8s prints.
func k8sManifests(sc *scenarios.Scenario, scenarioFile []byte, o k8sOptions) ([]byte, error) {
	if o.Segments < 1 {
		return nil, usageError{errors.New("--segments N is required (N >= 1)")}
	}
	if o.Image == "" {
		return nil, usageError{errors.New("--image is required: an image with qbench on its PATH")}
	}
	for i := range o.Segments {
		if err := bench.CheckSegment(sc, bench.SegmentOptions{Index: i, Count: o.Segments, StartAt: o.StartAt}); err != nil {
			return nil, usageError{err}
		}
	}
	name := k8sName(o.Name)
	if o.Name == "" {
		name = k8sName("qbench-" + sc.Name)
	}
	runID := bench.SegmentRunID(sc, o.StartAt)
	start := o.StartAt.UTC().Format(time.RFC3339Nano)
	claim := o.ResultsClaim
	if claim == "" {
		claim = name + "-results"
	}
	wait := o.MergeWait
	if wait <= 0 {
		wait = time.Until(o.StartAt).Round(time.Minute) + sc.Duration.D() + sc.DrainTimeout.D() + 5*time.Minute
		wait = max(wait, 5*time.Minute).Round(time.Minute)
	}
	meta := func(suffix string) k8sMeta {
		return k8sMeta{Name: name + suffix, Namespace: o.Namespace, Labels: map[string]string{"app.kubernetes.io/name": "qbench", "qbench/run": runID}}
	}
	scenarioPath := scenarioDir + "/scenario.yaml"
	volumes := []volume{
		{Name: "scenario", ConfigMap: &configMapRef{Name: name + "-scenario"}},
		{Name: "results", PersistentVolumeClaim: &claimRef{ClaimName: claim}},
	}
	mounts := []volumeMount{{Name: "scenario", MountPath: scenarioDir, ReadOnly: true}, {Name: "results", MountPath: resultsDir}}
	segmentFile := func(i string) string { return fmt.Sprintf("%s/%s-segment-%s.json", resultsDir, runID, i) }
	podLabels := func(role string) map[string]string {
		return map[string]string{"app.kubernetes.io/name": "qbench", "qbench/run": runID, "qbench/role": role}
	}
	n := o.Segments

	docs := []k8sObject{{APIVersion: "v1", Kind: "ConfigMap", Metadata: meta("-scenario"), Data: map[string]string{"scenario.yaml": string(scenarioFile)}}}
	if o.ResultsClaim == "" {
		docs = append(docs, k8sObject{APIVersion: "v1", Kind: "PersistentVolumeClaim", Metadata: meta("-results"),
			Spec: pvcSpec{AccessModes: []string{"ReadWriteMany"}, Resources: pvcResources{Requests: map[string]string{"storage": o.Storage}}}})
	}
	docs = append(docs, k8sObject{APIVersion: "batch/v1", Kind: "Job", Metadata: meta("-segments"), Spec: jobSpec{
		CompletionMode: "Indexed", Completions: &n, Parallelism: &n,
		// A segment that fails cannot be run again: its start time has passed.
		BackoffLimit: 0,
		Template: podTemplate{Metadata: k8sMeta{Labels: podLabels("segment")}, Spec: podSpec{
			RestartPolicy: "Never",
			// One segment per machine where the cluster has machines enough: the point is to
			// load the engine from several.
			TopologySpreadConstraints: []topologySpread{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: "ScheduleAnyway",
				LabelSelector: labelSelector{MatchLabels: podLabels("segment")}}},
			Containers: []container{{Name: "segment", Image: o.Image, Command: []string{"qbench"}, Args: []string{
				"run", scenarioPath,
				// Kubernetes expands $(JOB_COMPLETION_INDEX), which the Job controller sets
				// in every pod of an Indexed Job, in args: no shell needed in the image.
				fmt.Sprintf("--segment=$(JOB_COMPLETION_INDEX)/%d", n),
				"--start-at=" + start, "--run-id=" + runID, "--quiet",
				"--output=" + segmentFile("$(JOB_COMPLETION_INDEX)"),
			}, VolumeMounts: mounts}},
			Volumes: volumes,
		}},
	}})
	mergeArgs := []string{"merge", "--wait=" + wait.String()}
	for i := range n {
		mergeArgs = append(mergeArgs, segmentFile(fmt.Sprint(i)))
	}
	mergeArgs = append(mergeArgs, fmt.Sprintf("--output=%s/%s-merged.json", resultsDir, runID))
	docs = append(docs, k8sObject{APIVersion: "batch/v1", Kind: "Job", Metadata: meta("-merge"), Spec: jobSpec{
		BackoffLimit: 0,
		Template: podTemplate{Metadata: k8sMeta{Labels: podLabels("merge")}, Spec: podSpec{
			RestartPolicy: "Never",
			// Init containers run one after the other, before the main one: merge first, then
			// the run's tear-down, once every segment is done with the engine.
			InitContainers: []container{{Name: "merge", Image: o.Image, Command: []string{"qbench"}, Args: mergeArgs, VolumeMounts: mounts}},
			Containers: []container{{Name: "teardown", Image: o.Image, Command: []string{"qbench"},
				Args: []string{"run", scenarioPath, "--teardown-only", "--run-id=" + runID}, VolumeMounts: mounts}},
			Volumes: volumes,
		}},
	}})

	var buf bytes.Buffer
	// The header is the one place text goes out unencoded: each value is kept on its comment line.
	fmt.Fprintf(&buf, "# qbench k8s: %d segments of %s, run %s, starting at %s.\n", n, commentSafe(sc.Name), commentSafe(runID), start)
	fmt.Fprintf(&buf, "# kubectl apply -f this; then kubectl wait --for=condition=complete job/%s-merge --timeout=%s\n", name, wait+time.Minute)
	fmt.Fprintf(&buf, "# and copy %s/%s-merged.json off the %s volume.\n", resultsDir, commentSafe(runID), commentSafe(claim))
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
