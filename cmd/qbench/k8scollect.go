package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"qbench/results"
)

// Results leave the pods through kubectl, not through a shared volume: most clusters' default
// storage classes are ReadWriteOnce, which pods on several nodes cannot share, so each segment
// keeps its result in its own pod (an emptyDir) while its hold container runs, and qbench k8s
// collect fetches each with kubectl exec (the image has no tar for kubectl cp) and merges them
// on the machine that asks. A pod that failed has no result to fetch: its segment is missing,
// and the merge says so (PARTIAL), never counting its share lost.

// fetchedSuffix marks a result collect has fetched: hold then lets its pod finish.
const fetchedSuffix = ".fetched"

func k8sHoldCmd() *cobra.Command {
	var hold time.Duration
	cmd := &cobra.Command{
		Use:   "hold RESULT.json --for D",
		Short: "Keep a segment's pod, and its result, until qbench k8s collect fetched it or D passed (a pod's container)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if _, err := os.Stat(path); err != nil {
				return fmt.Errorf("no result to hold: %w", err)
			}
			fmt.Fprintf(os.Stderr, "qbench: holding %s for qbench k8s collect, up to %s\n", path, hold)
			stop := make(chan os.Signal, 1)
			signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
			deadline := time.After(hold)
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return nil
				case <-deadline:
					fmt.Fprintf(os.Stderr, "qbench: %s was not collected within %s\n", path, hold)
					return nil
				case <-tick.C:
					if _, err := os.Stat(path + fetchedSuffix); err == nil {
						return nil
					}
				}
			}
		},
	}
	cmd.Flags().DurationVar(&hold, "for", 2*time.Hour, "how long to keep the result")
	return cmd
}

func k8sCatCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cat RESULT.json",
		Short: "Write a held result to stdout and mark it fetched (what qbench k8s collect runs through kubectl exec)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(cmd.OutOrStdout(), f); err != nil {
				return err
			}
			return os.WriteFile(args[0]+fetchedSuffix, nil, 0o644)
		},
	}
}

// collectOptions are qbench k8s collect's inputs.
type collectOptions struct {
	RunID, Namespace, Dir, Output, Kubectl string
	Segments                               int
	Wait                                   time.Duration
}

func k8sCollectCmd() *cobra.Command {
	var o collectOptions
	cmd := &cobra.Command{
		Use:   "collect --run-id ID --segments N -o MERGED.json",
		Short: "Fetch a run's segment results from its pods (kubectl exec) and merge them; a missing segment makes the merge PARTIAL",
		Long: `collect finds each segment's pod by its labels (qbench/run=ID and the Job's
batch.kubernetes.io/job-completion-index), fetches its result with
  kubectl exec POD -c hold -- qbench k8s cat /results/ID-segment-i.json
into --dir, and merges what it fetched (qbench merge --allow-missing). A segment whose pod
failed, or is not running its hold container (its run not over), is missing: the merge is
marked PARTIAL and the missing share is unknown, never lost. --wait keeps asking for the
missing ones until they come or the wait ends.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.RunID == "" || o.Segments < 1 || o.Output == "" {
				return usageError{errors.New("collect needs --run-id, --segments N and -o MERGED.json")}
			}
			if o.Dir == "" {
				o.Dir = "."
			}
			paths, err := collectSegments(o)
			if err != nil {
				return err
			}
			if len(paths) == 0 {
				return fmt.Errorf("no segment of run %s could be fetched", o.RunID)
			}
			rs, _, err := readResults(paths)
			if err != nil {
				return err
			}
			m, err := mergeSegments(rs, true)
			if err != nil {
				return err
			}
			return writeMerged(cmd, o.Output, m)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.RunID, "run-id", "", "the run's ID (the manifest's header names it)")
	f.IntVar(&o.Segments, "segments", 0, "the run's number of segments")
	f.StringVar(&o.Namespace, "namespace", "", "the run's namespace (default: kubectl's)")
	f.StringVar(&o.Dir, "dir", ".", "where to write the segments' results")
	f.StringVarP(&o.Output, "output", "o", "", "write the merged result to this file")
	f.StringVar(&o.Kubectl, "kubectl", "kubectl", "the kubectl to run")
	f.DurationVar(&o.Wait, "wait", 0, "keep asking for missing segments this long (their runs may not be over)")
	return cmd
}

// collectSegments fetches every segment it can and returns the paths written.
func collectSegments(o collectOptions) ([]string, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	got := make([]string, o.Segments)
	deadline := time.Now().Add(o.Wait)
	for {
		var missing []string
		for i := range o.Segments {
			if got[i] != "" {
				continue
			}
			p, err := fetchSegment(o, i)
			if err != nil {
				missing = append(missing, fmt.Sprintf("segment %d: %v", i, err))
				continue
			}
			got[i] = p
		}
		if len(missing) == 0 {
			break
		}
		if !time.Now().Before(deadline) {
			for _, m := range missing {
				fmt.Fprintf(os.Stderr, "qbench: collect: %s: merged as missing\n", m)
			}
			break
		}
		time.Sleep(5 * time.Second)
	}
	var paths []string
	for _, p := range got {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// fetchSegment copies segment i's result out of its pod.
func fetchSegment(o collectOptions, i int) (string, error) {
	ns := []string{}
	if o.Namespace != "" {
		ns = []string{"--namespace", o.Namespace}
	}
	out, err := kubectl(o.Kubectl, append(ns, "get", "pods", "-o", "name",
		"-l", fmt.Sprintf("qbench/run=%s,qbench/role=segment,batch.kubernetes.io/job-completion-index=%d", o.RunID, i),
		"--field-selector=status.phase=Running")...)
	if err != nil {
		return "", err
	}
	pod, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if pod == "" {
		return "", errors.New("no running pod holds its result (its pod failed, or its run is not over)")
	}
	remote := fmt.Sprintf("%s/%s-segment-%d.json", resultsDir, o.RunID, i)
	data, err := kubectl(o.Kubectl, append(ns, "exec", pod, "-c", "hold", "--", "qbench", "k8s", "cat", remote)...)
	if err != nil {
		return "", err
	}
	p := filepath.Join(o.Dir, fmt.Sprintf("%s-segment-%d.json", o.RunID, i))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return "", err
	}
	if _, err := results.ReadFile(p); err != nil {
		return "", fmt.Errorf("fetched from %s: %w", pod, err)
	}
	return p, nil
}

func kubectl(bin string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
