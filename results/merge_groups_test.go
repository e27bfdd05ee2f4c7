package results_test

import (
	"testing"

	"qbench/results"
	"qbench/results/resultstest"
)

// Merging machines adds each second's bytes and each group's lag readings, and reads the
// per-group lag max again from the merged series; repetitions keep each group's largest figures.
func TestMergeAddsBytesAndGroupLag(t *testing.T) {
	a := resultstest.Make(resultstest.Options{Seed: 1, Seconds: 3})
	b := resultstest.Make(resultstest.Options{Seed: 2, Seconds: 3})
	for i := range a.Series {
		a.Series[i].GroupLag = []int64{1, int64(10 * i)}
		b.Series[i].GroupLag = []int64{2, int64(20 * i)}
	}
	a.Summary.PerGroup = []results.GroupLag{{Group: 0, Consumers: 1, Delivered: 3000, LagMax: 1}, {Group: 1, Consumers: 1, Delivered: 2990, LagMax: 20, LagEnd: 10}}
	b.Summary.PerGroup = []results.GroupLag{{Group: 0, Consumers: 2, Delivered: 3000, LagMax: 2}, {Group: 1, Consumers: 2, Delivered: 2995, LagMax: 40, LagEnd: 5}}
	for _, tc := range []struct {
		mode results.MergeMode
		want []results.GroupLag
	}{
		{results.MergeMachines, []results.GroupLag{{Group: 0, Consumers: 3, Delivered: 6000, LagMax: 3}, {Group: 1, Consumers: 3, Delivered: 5985, LagMax: 60, LagEnd: 15}}},
		{results.MergeRepetitions, []results.GroupLag{{Group: 0, Consumers: 2, Delivered: 3000, LagMax: 2}, {Group: 1, Consumers: 2, Delivered: 2995, LagMax: 40, LagEnd: 10}}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			m, err := results.Merge([]*results.Result{a, b}, results.MergeOptions{Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Summary.PerGroup) != 2 || m.Summary.PerGroup[0] != tc.want[0] || m.Summary.PerGroup[1] != tc.want[1] {
				t.Errorf("per group %+v, want %+v", m.Summary.PerGroup, tc.want)
			}
			if tc.mode != results.MergeMachines {
				return
			}
			for i, iv := range m.Series {
				if iv.AckedBytes != a.Series[i].AckedBytes+b.Series[i].AckedBytes || iv.DeliveredBytes != a.Series[i].DeliveredBytes+b.Series[i].DeliveredBytes || iv.AckedBytes == 0 {
					t.Errorf("second %d: bytes %d/%d", i, iv.AckedBytes, iv.DeliveredBytes)
				}
				if len(iv.GroupLag) != 2 || iv.GroupLag[0] != 3 || iv.GroupLag[1] != int64(30*i) {
					t.Errorf("second %d: group lag %v", i, iv.GroupLag)
				}
			}
		})
	}
}
