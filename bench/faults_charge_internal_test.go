package bench

import (
	"errors"
	"testing"

	"qbench/bench/ledger"
)

// Failed sends are charged by the rule loss and duplicates are (README, Faults): to the first
// destructive window that ended at or after the message's intended time, else the first such
// window, among the windows begun when the send failed; not to the latest fault fired.
func TestProduceErrorsChargedByTheOverlapRule(t *testing.T) {
	ms := func(n int64) int64 { return n * 1e6 }
	// A long consumer pause, a server crash inside it, and a second pause fired during the crash.
	spans := []ledger.Window{
		{StartNs: ms(1000), EndNs: ms(2200)},
		{StartNs: ms(1500), EndNs: ms(1800), Destructive: true},
		{StartNs: ms(1600), EndNs: ms(1700)},
	}
	r := &run{}
	fail := func(begun int, intended ...int64) {
		for len(r.windows) < begun {
			r.windows = append(r.windows, &faultWindow{})
		}
		errs := make([]error, len(intended)+1) // one send of the batch succeeded
		for i := range intended {
			errs[i] = errors.New("refused")
		}
		r.noteProduceFailures(append(intended, ms(1)), errs)
	}
	fail(0, ms(900))            // before any fault began: charged to none
	fail(1, ms(500), ms(1100))  // only the first pause had begun: it is the only candidate
	fail(2, ms(1200), ms(1550)) // the crash had begun: both were still undelivered when it struck
	fail(3, ms(1650), ms(1900)) // during the crash (not the pause fired last), then after it ended
	fail(3, ms(2300))           // after every window ended: none
	failed := make([][]int64, len(r.windows))
	for i, w := range r.windows {
		failed[i] = w.failedIntended
	}
	got := chargeProduceErrors(spans, failed)
	want := []int64{3, 3, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("produce errors per window %v, want %v (the latest fired would give [2 2 3])", got, want)
		}
	}
}
