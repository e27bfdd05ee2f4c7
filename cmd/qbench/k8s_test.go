package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	sigsyaml "sigs.k8s.io/yaml"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

func k8sOutput(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := qbench(t, append([]string{"k8s", "testdata/k8s-scenario.yaml"}, args...)...)
	if code != 0 {
		t.Fatalf("qbench k8s: exit %d: %s", code, stderr)
	}
	return out
}

func TestK8sManifestMatchesGolden(t *testing.T) {
	got := k8sOutput(t, "--segments", "4", "--image", "ghcr.io/example/qbench:0.1", "--run-id", "orders-golden")
	path := filepath.Join("testdata", "k8s-segments.golden.yaml")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("qbench k8s output differs from %s (go test -update rewrites it)\n--- got ---\n%s", path, got)
	}
}

// k8sDoc is one document of a manifest stream, decoded strictly into the API's own type.
type k8sDoc struct {
	kind   string
	job    *batchv1.Job
	secret *corev1.Secret
	pvc    *corev1.PersistentVolumeClaim
}

// decodeStrict splits a manifest stream into documents and decodes each into k8s.io/api's type
// for its kind with unknown fields refused (sigs.k8s.io/yaml's UnmarshalStrict: the API
// server's strict field validation), so a misspelt or misplaced field fails here.
func decodeStrict(t *testing.T, out string) []k8sDoc {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(out))
	var docs []k8sDoc
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("manifest does not decode: %v", err)
		}
		raw, err := yaml.Marshal(&node)
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ APIVersion, Kind string }
		if err := sigsyaml.Unmarshal(raw, &head); err != nil {
			t.Fatal(err)
		}
		d := k8sDoc{kind: head.Kind}
		var obj any
		switch head.APIVersion + " " + head.Kind {
		case "batch/v1 Job":
			d.job = &batchv1.Job{}
			obj = d.job
		case "v1 Secret":
			d.secret = &corev1.Secret{}
			obj = d.secret
		case "v1 PersistentVolumeClaim":
			d.pvc = &corev1.PersistentVolumeClaim{}
			obj = d.pvc
		default:
			t.Fatalf("unexpected object %s %s", head.APIVersion, head.Kind)
		}
		if err := sigsyaml.UnmarshalStrict(raw, obj); err != nil {
			t.Fatalf("%s does not decode strictly into k8s.io/api's type: %v\n%s", head.Kind, err, raw)
		}
		docs = append(docs, d)
	}
}

// The manifests are objects of the API's own types, and the objects a stock cluster runs as a
// segmented run: every name a DNS-1123 label carrying the run's suffix, the scenario in a Secret,
// the segments an Indexed Job with requests and limits, retried per index and failed per index
// on exit 2, results in each pod unless a ReadWriteMany claim is asked for, and a tear-down
// that depends on nothing.
func TestK8sManifestDecodesStrictly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		kinds []string
	}{
		{"barrier, results in the pods", []string{"--segments", "3"}, []string{"Secret", "Job", "Job"}},
		{"absolute start", []string{"--segments", "1", "--start-at", "2099-01-01T00:00:00Z"}, []string{"Secret", "Job", "Job"}},
		{"emitted ReadWriteMany claim", []string{"--segments", "4", "--rwx", "--storage-class", "nfs"}, []string{"Secret", "PersistentVolumeClaim", "Job", "Job", "Job"}},
		{"existing claim", []string{"--segments", "2", "--results-claim", "shared"}, []string{"Secret", "Job", "Job", "Job"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := k8sOutput(t, append([]string{"--image", "img:1", "--namespace", "bench", "--cpu", "2", "--memory", "512Mi", "--run-id", "orders-1"}, tc.args...)...)
			docs := decodeStrict(t, out)
			var kinds []string
			for _, d := range docs {
				kinds = append(kinds, d.kind)
			}
			if !slices.Equal(kinds, tc.kinds) {
				t.Fatalf("kinds %v, want %v", kinds, tc.kinds)
			}
			secret := docs[0].secret
			if _, ok := secret.StringData["scenario.yaml"]; !ok || !strings.Contains(secret.StringData["scenario.yaml"], "address:") {
				t.Errorf("the Secret does not hold the scenario: %v", secret.StringData)
			}
			var seg *batchv1.Job
			for _, d := range docs {
				var m *metaFields
				switch {
				case d.job != nil:
					m = &metaFields{d.job.Name, d.job.Namespace, d.job.Labels}
					if d.job.Labels["qbench/role"] == "segment" {
						seg = d.job
					}
					checkPod(t, d.job, secret.Name)
				case d.secret != nil:
					m = &metaFields{d.secret.Name, d.secret.Namespace, d.secret.Labels}
				case d.pvc != nil:
					m = &metaFields{d.pvc.Name, d.pvc.Namespace, d.pvc.Labels}
					if !slices.Equal(d.pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) || d.pvc.Spec.StorageClassName == nil || *d.pvc.Spec.StorageClassName != "nfs" {
						t.Errorf("claim %+v: want ReadWriteMany of class nfs", d.pvc.Spec)
					}
				}
				if errs := validation.IsDNS1123Label(m.name); len(errs) > 0 || !strings.Contains(m.name, runSuffix("orders-1")) {
					t.Errorf("%s name %q: %v; want a DNS-1123 label with the run's suffix", d.kind, m.name, errs)
				}
				if m.namespace != "bench" || m.labels["qbench/run"] != "orders-1" {
					t.Errorf("%s %s: namespace %q, labels %v", d.kind, m.name, m.namespace, m.labels)
				}
			}
			if seg == nil {
				t.Fatal("no segments Job")
			}
			n := int32(0)
			fmt.Sscan(tc.args[1], &n)
			s := seg.Spec
			if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != n || *s.Parallelism != n {
				t.Errorf("segments Job: mode %v, completions %v, parallelism %v; want Indexed, %d, %d", s.CompletionMode, s.Completions, s.Parallelism, n, n)
			}
			// A pod hostname is JOB-NAME-INDEX: 63 characters at most.
			if l := len(fmt.Sprintf("%s-%d", seg.Name, n-1)); l > 63 {
				t.Errorf("pod host name %d characters", l)
			}
			if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex < 1 || s.PodFailurePolicy == nil {
				t.Fatalf("segments Job: backoffLimitPerIndex %v, podFailurePolicy %v", s.BackoffLimitPerIndex, s.PodFailurePolicy)
			}
			var failIndex bool
			for _, r := range s.PodFailurePolicy.Rules {
				if r.Action == batchv1.PodFailurePolicyActionFailIndex && r.OnExitCodes != nil && slices.Contains(r.OnExitCodes.Values, int32(exitUsage)) {
					failIndex = true
				}
			}
			if !failIndex {
				t.Errorf("no FailIndex rule for exit %d (a segment that missed the start)", exitUsage)
			}
			run := findContainer(seg.Spec.Template.Spec, "run")
			if run == nil {
				t.Fatal("no run container")
			}
			if q := run.Resources.Limits[corev1.ResourceCPU]; q.String() != "2" {
				t.Errorf("run CPU limit %v, want 2", q.String())
			}
			if q := run.Resources.Requests[corev1.ResourceMemory]; q.String() != "512Mi" {
				t.Errorf("run memory request %v, want 512Mi", q.String())
			}
			args := strings.Join(run.Args, " ")
			for _, want := range []string{fmt.Sprintf("--segment=$(JOB_COMPLETION_INDEX)/%d", n), "--run-id=orders-1", "--output=/results/orders-1-segment-$(JOB_COMPLETION_INDEX).json"} {
				if !strings.Contains(args, want) {
					t.Errorf("run args %q lack %q", args, want)
				}
			}
			barrier := findContainer(seg.Spec.Template.Spec, "barrier")
			if absolute := slices.Contains(tc.args, "--start-at"); absolute == (barrier != nil) || absolute != strings.Contains(args, "--start-at=2099") {
				t.Errorf("absolute start %v, barrier %v, run args %q", absolute, barrier != nil, args)
			}
			shared := len(tc.kinds) > 3
			for _, v := range seg.Spec.Template.Spec.Volumes {
				if v.Name == "results" && shared != (v.PersistentVolumeClaim != nil) {
					t.Errorf("results volume %+v with a shared claim %v", v.VolumeSource, shared)
				}
			}
			if !shared && findContainer(seg.Spec.Template.Spec, "hold") == nil {
				t.Error("results in the pods, but no hold container keeps them for collect")
			}
		})
	}
}

type metaFields struct {
	name, namespace string
	labels          map[string]string
}

func findContainer(p corev1.PodSpec, name string) *corev1.Container {
	for _, cs := range [][]corev1.Container{p.InitContainers, p.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}

// checkPod: a Job's pod restarts as Jobs allow, runs qbench non-root with every container's
// resources set, mounts only volumes it has, and reads the scenario from the Secret.
func checkPod(t *testing.T, j *batchv1.Job, secret string) {
	t.Helper()
	p := j.Spec.Template.Spec
	if p.RestartPolicy != corev1.RestartPolicyNever && p.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("%s: restartPolicy %q", j.Name, p.RestartPolicy)
	}
	if p.SecurityContext == nil || p.SecurityContext.RunAsNonRoot == nil || !*p.SecurityContext.RunAsNonRoot {
		t.Errorf("%s: not runAsNonRoot", j.Name)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range p.Volumes {
		vols[v.Name] = v
		if v.ConfigMap != nil {
			t.Errorf("%s: a ConfigMap volume: the scenario holds credentials", j.Name)
		}
		if v.Secret != nil && v.Secret.SecretName != secret {
			t.Errorf("%s: mounts Secret %s, not the emitted %s", j.Name, v.Secret.SecretName, secret)
		}
	}
	for _, cs := range [][]corev1.Container{p.InitContainers, p.Containers} {
		for _, c := range cs {
			if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("%s/%s: no memory request or limit", j.Name, c.Name)
			}
			if len(c.Command) != 1 || c.Command[0] != "qbench" {
				t.Errorf("%s/%s: command %v", j.Name, c.Name, c.Command)
			}
			for _, m := range c.VolumeMounts {
				if _, ok := vols[m.Name]; !ok {
					t.Errorf("%s/%s mounts %s, not a volume of the pod", j.Name, c.Name, m.Name)
				}
			}
		}
	}
}

func TestK8sRefuses(t *testing.T) {
	managed := writeFile(t, "m.yaml", "name: m\nengine: redis\nproducers: 2\nconsumers: 2\nrate: 10\nduration: 1s\n")
	loopback := writeFile(t, "l.yaml", "name: l\nengine: redis-url\naddress: redis://:secret@127.0.0.1:6379\nproducers: 2\nconsumers: 2\nrate: 10\nduration: 1s\n")
	localhost := writeFile(t, "h.yaml", "name: h\nengine: redis-url\naddress: localhost:6379\nproducers: 2\nconsumers: 2\nrate: 10\nduration: 1s\n")
	kafka := writeFile(t, "k.yaml", "name: k\nengine: kafka-url\naddress: kafka.bench.svc:9092\nproducers: 2\nconsumers: 2\nrate: 10\nduration: 1s\n")
	sc := "testdata/k8s-scenario.yaml"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no image", []string{sc, "--segments", "2"}, "--image"},
		{"no segments", []string{sc, "--image", "x"}, "--segments"},
		{"a managed engine", []string{managed, "--segments", "2", "--image", "x", "--start-at", "2099-01-01T00:00:00Z"}, "cannot be shared"},
		{"more segments than work", []string{sc, "--segments", "9", "--image", "x"}, "no producer and no consumer"},
		{"a loopback address", []string{loopback, "--segments", "2", "--image", "x"}, "127.0.0.1 is a loopback address"},
		{"localhost", []string{localhost, "--segments", "2", "--image", "x"}, "localhost is a loopback address"},
		{"a start in the past", []string{sc, "--segments", "2", "--image", "x", "--start-at", "2020-01-01T00:00:00Z"}, "in the past"},
		{"no barrier for the engine", []string{kafka, "--segments", "2", "--image", "x"}, "has no readiness barrier"},
		{"a bad quantity", []string{sc, "--segments", "2", "--image", "x", "--memory", "lots"}, "--memory \"lots\""},
		{"a run ID that is no label", []string{sc, "--segments", "2", "--image", "x", "--run-id", "a b"}, "label value"},
		{"two claims", []string{sc, "--segments", "2", "--image", "x", "--rwx", "--results-claim", "c"}, "give one of them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := qbench(t, append([]string{"k8s"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
			if strings.Contains(stderr, "secret") {
				t.Errorf("the password reached stderr: %q", stderr)
			}
		})
	}
}

// An absolute start close ahead is accepted with a warning; far ahead, without one.
func TestK8sWarnsOfAShortStart(t *testing.T) {
	for _, tc := range []struct {
		ahead time.Duration
		warn  bool
	}{{30 * time.Second, true}, {time.Hour, false}} {
		at := time.Now().Add(tc.ahead).UTC().Format(time.RFC3339)
		_, stderr, code := qbench(t, "k8s", "testdata/k8s-scenario.yaml", "--segments", "2", "--image", "x", "--start-at", at)
		if code != 0 || strings.Contains(stderr, "only") != tc.warn {
			t.Errorf("start %s ahead: exit %d, stderr %q; want exit 0, a warning %v", tc.ahead, code, stderr, tc.warn)
		}
	}
}

// Two generations of one scenario name their objects apart: re-applying never collides.
func TestK8sNamesAreRunUnique(t *testing.T) {
	a := k8sOutput(t, "--segments", "2", "--image", "x")
	b := k8sOutput(t, "--segments", "2", "--image", "x", "--run-id", "orders-other")
	names := func(out string) []string {
		var n []string
		for _, d := range decodeStrict(t, out) {
			switch {
			case d.job != nil:
				n = append(n, d.job.Name)
			case d.secret != nil:
				n = append(n, d.secret.Name)
			}
		}
		return n
	}
	na, nb := names(a), names(b)
	for _, x := range na {
		if slices.Contains(nb, x) {
			t.Errorf("object %s in both runs", x)
		}
	}
	if bytes.Equal([]byte(a), []byte(b)) {
		t.Error("identical manifests")
	}
}
