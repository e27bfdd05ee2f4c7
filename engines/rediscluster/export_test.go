package rediscluster

import (
	"strconv"
	"testing"

	"qbench/engines"
	"qbench/engines/redisq"
)

func mustDesign(t *testing.T, design string) *redisq.Design {
	d, err := redisq.NewDesign(nil, engines.Spec{Design: design, RunID: "x"}, redisq.DesignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func itoa(i int) string { return strconv.Itoa(i) }
