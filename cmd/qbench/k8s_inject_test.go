package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// k8sKinds decodes every document of a manifest stream and returns their kinds.
func k8sKinds(t *testing.T, out []byte) []string {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(out))
	var kinds []string
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return kinds
		}
		if err != nil {
			t.Fatalf("manifest does not decode: %v\n%s", err, out)
		}
		kind, _ := doc["kind"].(string)
		kinds = append(kinds, kind)
	}
}

// A scenario name cannot inject Kubernetes objects into qbench k8s's output, which its help says
// to pipe to kubectl apply: the loader refuses a name with a line break (exit 2), and the
// manifest's only unencoded text, its header comment, keeps even such a name on its line.
func TestK8sNameCannotInjectObjects(t *testing.T) {
	evil := "orders\n---\nkind: ClusterRoleBinding\nmetadata: {name: pwned}"
	want := []string{"Secret", "Job", "Job"}

	t.Run("refused at load", func(t *testing.T) {
		data, err := os.ReadFile("testdata/k8s-scenario.yaml")
		if err != nil {
			t.Fatal(err)
		}
		quoted, _ := yaml.Marshal(map[string]string{"name": evil})
		file := writeFile(t, "evil.yaml", strings.Replace(string(data), "name: orders\n", string(quoted), 1))
		_, stderr, code := qbench(t, "k8s", file, "--segments", "2", "--image", "x")
		if code != exitUsage || !strings.Contains(stderr, "evil.yaml:1: name: must be") {
			t.Fatalf("exit %d, stderr %q; want exit 2 naming evil.yaml:1: name", code, stderr)
		}
	})
	t.Run("valid name decodes to the expected objects only", func(t *testing.T) {
		sc, err := loadScenario("testdata/k8s-scenario.yaml")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile("testdata/k8s-scenario.yaml")
		o := k8sOptions{Segments: 2, Image: "x", StartAt: time.Unix(4_000_000_000, 0), Storage: "1Gi", CPU: "1", Memory: "1Gi",
			BarrierTimeout: time.Minute, Lead: time.Second, Hold: time.Hour}
		out, err := k8sManifests(sc, raw, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := k8sKinds(t, out); !slices.Equal(got, want) {
			t.Fatalf("kinds %v, want %v", got, want)
		}
		// Past the loader (a scenario built in code, a claim or namespace from a flag), the header
		// still holds.
		sc.Name = evil
		o.ResultsClaim = "claim\nkind: Secret"
		o.Namespace = "ns\n---\nkind: ClusterRole"
		out, err = k8sManifests(sc, raw, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := k8sKinds(t, out); !slices.Equal(got, []string{"Secret", "Job", "Job", "Job"}) {
			t.Fatalf("with a crafted name and claim: kinds %v\n%s", got, out)
		}
	})
	// The scenario file, address and password included, goes into the Secret as one encoded
	// string, and a crafted address reaches no argument: whatever they hold stays data.
	t.Run("crafted address and file stay in the Secret", func(t *testing.T) {
		sc, err := loadScenario("testdata/k8s-scenario.yaml")
		if err != nil {
			t.Fatal(err)
		}
		sc.Address = "redis.bench.svc:6379\n---\nkind: ClusterRoleBinding\nmetadata: {name: pwned}"
		raw := []byte("address: x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: pwned}\n...\n")
		o := k8sOptions{Segments: 2, Image: "x", RunID: "r", CPU: "1", Memory: "1Gi", Storage: "1Gi",
			BarrierTimeout: time.Minute, Lead: time.Second, Hold: time.Hour}
		out, err := k8sManifests(sc, raw, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := k8sKinds(t, out); !slices.Equal(got, want) {
			t.Fatalf("kinds %v, want %v\n%s", got, want, out)
		}
		if strings.Contains(string(out), "\n---\napiVersion: v1\nkind: ConfigMap") || strings.Contains(string(out), "ClusterRoleBinding") {
			t.Errorf("the crafted text reached the stream unencoded:\n%s", out)
		}
	})
}
