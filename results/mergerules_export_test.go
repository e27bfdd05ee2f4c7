package results

import (
	"sort"
)

// The rule tables, for the external tests of merge_fields_test.go.

func mergeTable(table string) map[string]mergeRule {
	switch table {
	case "result":
		return resultRules
	case "summary":
		return summaryRules
	case "fault":
		return faultRules
	}
	out := map[string]mergeRule{}
	for k, v := range intervalRules {
		out[k] = mergeRule{Machines: v}
	}
	return out
}

// MergeRuleFields lists the fields a table has rules for.
func MergeRuleFields(table string) []string {
	var out []string
	for k := range mergeTable(table) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MergeRule is a field's rule in a mode.
func MergeRule(table, field string, mode MergeMode) (string, bool) {
	r, ok := mergeTable(table)[field]
	if mode == MergeRepetitions {
		return r.Repetitions, ok
	}
	return r.Machines, ok
}
