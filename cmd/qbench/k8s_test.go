package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The fields qbench k8s may emit, by object kind, each a path of field names from the object's
// root ([] marks a list's items), as the Kubernetes API reference defines them: batch/v1 Job
// (JobSpec, PodTemplateSpec, PodSpec, Container, VolumeMount, Volume, TopologySpreadConstraint,
// LabelSelector), v1 ConfigMap and v1 PersistentVolumeClaim. A field outside these is a typo
// the API server would refuse (strict decoding) or silently drop.
var k8sFields = map[string][]string{
	"Job": {
		"apiVersion", "kind", "metadata", "metadata.name", "metadata.namespace", "metadata.labels", "metadata.labels.*",
		"spec", "spec.completionMode", "spec.completions", "spec.parallelism", "spec.backoffLimit",
		"spec.template", "spec.template.metadata", "spec.template.metadata.labels", "spec.template.metadata.labels.*",
		"spec.template.spec", "spec.template.spec.restartPolicy",
		"spec.template.spec.topologySpreadConstraints", "spec.template.spec.topologySpreadConstraints[]",
		"spec.template.spec.topologySpreadConstraints[].maxSkew", "spec.template.spec.topologySpreadConstraints[].topologyKey",
		"spec.template.spec.topologySpreadConstraints[].whenUnsatisfiable", "spec.template.spec.topologySpreadConstraints[].labelSelector",
		"spec.template.spec.topologySpreadConstraints[].labelSelector.matchLabels", "spec.template.spec.topologySpreadConstraints[].labelSelector.matchLabels.*",
		"spec.template.spec.volumes", "spec.template.spec.volumes[]", "spec.template.spec.volumes[].name",
		"spec.template.spec.volumes[].configMap", "spec.template.spec.volumes[].configMap.name",
		"spec.template.spec.volumes[].persistentVolumeClaim", "spec.template.spec.volumes[].persistentVolumeClaim.claimName",
	},
	"ConfigMap":             {"apiVersion", "kind", "metadata", "metadata.name", "metadata.namespace", "metadata.labels", "metadata.labels.*", "data", "data.*"},
	"PersistentVolumeClaim": {"apiVersion", "kind", "metadata", "metadata.name", "metadata.namespace", "metadata.labels", "metadata.labels.*", "spec", "spec.accessModes", "spec.accessModes[]", "spec.resources", "spec.resources.requests", "spec.resources.requests.storage"},
}

// Container fields, under spec.template.spec.containers[] and initContainers[].
var containerFields = []string{"", ".name", ".image", ".command", ".command[]", ".args", ".args[]", ".volumeMounts", ".volumeMounts[]", ".volumeMounts[].name", ".volumeMounts[].mountPath", ".volumeMounts[].readOnly"}

func init() {
	for _, list := range []string{"containers", "initContainers"} {
		k8sFields["Job"] = append(k8sFields["Job"], "spec.template.spec."+list)
		for _, f := range containerFields {
			k8sFields["Job"] = append(k8sFields["Job"], "spec.template.spec."+list+"[]"+f)
		}
	}
}

func k8sOutput(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := qbench(t, append([]string{"k8s", "testdata/k8s-scenario.yaml"}, args...)...)
	if code != 0 {
		t.Fatalf("qbench k8s: exit %d: %s", code, stderr)
	}
	return out
}

func TestK8sManifestMatchesGolden(t *testing.T) {
	got := k8sOutput(t, "--segments", "4", "--image", "ghcr.io/example/qbench:0.1", "--start-at", "2026-12-01T12:00:00Z", "--merge-wait", "10m")
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

// Every field emitted is a field of its kind's schema, and the Job is one the Job controller runs
// as segments: Indexed, one completion per segment, all at once, the segment from the completion
// index, one start time and run ID for all, results on a volume the merge reads.
func TestK8sManifestFieldsAreJobFields(t *testing.T) {
	for _, n := range []int{1, 3, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			out := k8sOutput(t, "--segments", fmt.Sprint(n), "--image", "img:1", "--start-at", "2026-12-01T12:00:00Z", "--merge-wait", "10m", "--namespace", "bench")
			dec := yaml.NewDecoder(strings.NewReader(out))
			var docs []map[string]any
			for {
				var d map[string]any
				if err := dec.Decode(&d); err != nil {
					break
				}
				docs = append(docs, d)
			}
			if len(docs) != 4 {
				t.Fatalf("%d documents, want ConfigMap, PersistentVolumeClaim and two Jobs", len(docs))
			}
			var jobs []map[string]any
			for _, d := range docs {
				kind, _ := d["kind"].(string)
				allowed := map[string]bool{}
				for _, f := range k8sFields[kind] {
					allowed[f] = true
				}
				if len(allowed) == 0 {
					t.Fatalf("unexpected kind %q", kind)
				}
				for _, p := range fieldPaths("", d) {
					if !allowed[p] {
						t.Errorf("%s has field %s, not in its schema", kind, p)
					}
				}
				if get(d, "metadata.namespace") != "bench" {
					t.Errorf("%s namespace %v", kind, get(d, "metadata.namespace"))
				}
				if kind == "Job" {
					if get(d, "apiVersion") != "batch/v1" {
						t.Errorf("Job apiVersion %v", get(d, "apiVersion"))
					}
					jobs = append(jobs, d)
				}
			}
			seg, merge := jobs[0], jobs[1]
			for _, c := range []struct {
				path string
				want any
			}{
				{"spec.completionMode", "Indexed"}, {"spec.completions", n}, {"spec.parallelism", n},
				{"spec.template.spec.restartPolicy", "Never"}, {"spec.backoffLimit", 0},
			} {
				if got := get(seg, c.path); got != c.want {
					t.Errorf("segments Job %s = %v, want %v", c.path, got, c.want)
				}
			}
			if p := get(merge, "spec.template.spec.restartPolicy"); p != "Never" && p != "OnFailure" {
				t.Errorf("merge Job restartPolicy %v: a Job's pods must be Never or OnFailure", p)
			}
			args := strings.Join(strs(get(seg, "spec.template.spec.containers[0].args")), " ")
			for _, want := range []string{fmt.Sprintf("--segment=$(JOB_COMPLETION_INDEX)/%d", n), "--start-at=2026-12-01T12:00:00Z", "--run-id=", "--output=/results/"} {
				if !strings.Contains(args, want) {
					t.Errorf("segment args %q lack %q", args, want)
				}
			}
			runID := regexp.MustCompile(`--run-id=(\S+)`).FindStringSubmatch(args)[1]
			margs := strs(get(merge, "spec.template.spec.initContainers[0].args"))
			var files int
			for _, a := range margs {
				if strings.HasPrefix(a, "/results/"+runID+"-segment-") {
					files++
				}
			}
			if files != n {
				t.Errorf("merge reads %d segment files, want %d: %v", files, n, margs)
			}
			// Every mount names a volume of its pod.
			for _, j := range jobs {
				vols := map[any]bool{}
				for _, v := range list(get(j, "spec.template.spec.volumes")) {
					vols[v.(map[string]any)["name"]] = true
				}
				for _, cs := range []string{"containers", "initContainers"} {
					for _, c := range list(get(j, "spec.template.spec."+cs)) {
						for _, m := range list(c.(map[string]any)["volumeMounts"]) {
							if !vols[m.(map[string]any)["name"]] {
								t.Errorf("%s mounts %v, not a volume of the pod", get(j, "metadata.name"), m)
							}
						}
					}
				}
			}
		})
	}
}

func TestK8sRefuses(t *testing.T) {
	managed := writeFile(t, "m.yaml", "name: m\nengine: redis\nproducers: 2\nconsumers: 2\nrate: 10\nduration: 1s\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no image", []string{"k8s", "testdata/k8s-scenario.yaml", "--segments", "2"}, "--image"},
		{"no segments", []string{"k8s", "testdata/k8s-scenario.yaml", "--image", "x"}, "--segments"},
		{"a managed engine", []string{"k8s", managed, "--segments", "2", "--image", "x"}, "cannot be shared"},
		{"more segments than work", []string{"k8s", "testdata/k8s-scenario.yaml", "--segments", "9", "--image", "x"}, "no producer and no consumer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := qbench(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// fieldPaths lists every field path under v: map keys joined by dots, list items as [], the keys
// of free-form maps (labels, data) as *.
func fieldPaths(prefix string, v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := k
			if strings.HasSuffix(prefix, "labels") || strings.HasSuffix(prefix, "matchLabels") || prefix == "data" {
				name = "*"
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			out = append(out, p)
			out = append(out, fieldPaths(p, v[k])...)
		}
	case []any:
		for _, e := range v {
			out = append(out, prefix+"[]")
			out = append(out, fieldPaths(prefix+"[]", e)...)
		}
	}
	return out
}

// get follows a path of keys, with [i] for list items.
func get(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		idx := -1
		if i := strings.Index(part, "["); i >= 0 {
			fmt.Sscanf(part[i:], "[%d]", &idx)
			part = part[:i]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[part]
		if idx >= 0 {
			l := list(v)
			if idx >= len(l) {
				return nil
			}
			v = l[idx]
		}
	}
	return v
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func strs(v any) []string {
	var out []string
	for _, e := range list(v) {
		out = append(out, fmt.Sprint(e))
	}
	return out
}
