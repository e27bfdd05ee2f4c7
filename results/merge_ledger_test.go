package results

import (
	"reflect"
	"testing"
)

// Every count of the ledger is merged: a field added later cannot be dropped silently (as
// reordered once was).
func TestMergeAddsEveryLedgerField(t *testing.T) {
	var one Ledger
	v := reflect.ValueOf(&one).Elem()
	for i := range v.NumField() {
		if v.Field(i).Kind() != reflect.Int64 {
			t.Fatalf("Ledger.%s is %s: addLedger adds int64 counts only", v.Type().Field(i).Name, v.Field(i).Kind())
		}
		v.Field(i).SetInt(int64(i + 1))
	}
	var sum Ledger
	addLedger(&sum, one)
	addLedger(&sum, one)
	s := reflect.ValueOf(sum)
	for i := range s.NumField() {
		if got, want := s.Field(i).Int(), 2*int64(i+1); got != want {
			t.Errorf("merged Ledger.%s = %d, want %d", s.Type().Field(i).Name, got, want)
		}
	}
}
