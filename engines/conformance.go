package engines

// The promises a design can make to the conformance suite (bench/conformance_test.go). A
// registration lists, per design, the ones it keeps (Registration.Conformance); the suite runs
// every registered engine over the cases its designs promise, so a new engine is in the suite by
// being registered, and a design is never held to a promise it does not make.
const (
	// PromiseExactlyOnceInOrder: without faults, one producer and one consumer, every
	// acknowledged message is delivered once to each receiving group, in order.
	PromiseExactlyOnceInOrder = "exactly-once-in-order"
	// PromiseCompetingConsumers: several producers and consumers, every acknowledged message
	// delivered once to each receiving group, nothing lost.
	PromiseCompetingConsumers = "competing-consumers"
	// PromiseFanOut qualifies the others: every consumer is a receiving group of its own and is
	// owed every message (pub/sub), instead of the consumers competing for them.
	PromiseFanOut = "fan-out"
	// PromiseRedelivery: a consumer killed after its work and before its acknowledgement costs
	// duplicates, never a loss.
	PromiseRedelivery = "redelivery-after-consumer-crash"
	// PromiseListLosesInFlight: no acknowledgement; a consumer killed holding a message before its
	// work loses exactly that message.
	PromiseListLosesInFlight = "list-loses-in-flight"
	// PromiseOfflineSubscriberMisses: at most once; a subscriber offline for a window misses what
	// was published meanwhile, the others miss nothing.
	PromiseOfflineSubscriberMisses = "at-most-once-offline-subscriber-misses"
	// PromiseTrimming: a length cap below the backlog (stream: maxlen) drops unread messages,
	// counted as lost.
	PromiseTrimming = "trimming"
	// PromiseDeadLetter: a message whose work always fails is redelivered max_deliveries times
	// (stream: claim_idle, max_deliveries), then moved to the dead-letter queue, none lost.
	PromiseDeadLetter = "dead-letter"
	// PromiseWaitForReplicas: wait: replicas without a replica falls short on every batch,
	// recorded (acknowledged) or required (failed).
	PromiseWaitForReplicas = "wait-for-replicas"
)

// Promises lists every promise name, for checking a registration's Conformance.
var Promises = []string{
	PromiseExactlyOnceInOrder, PromiseCompetingConsumers, PromiseFanOut, PromiseRedelivery,
	PromiseListLosesInFlight, PromiseOfflineSubscriberMisses, PromiseTrimming, PromiseDeadLetter,
	PromiseWaitForReplicas,
}

// Conformance is what one design promises the conformance suite, and what its runs need.
type Conformance struct {
	// Promises are the Promise* names the design keeps.
	Promises []string
	// Scenario is scenario YAML appended to the suite's scenario of a promise, keyed by the
	// promise, so that its case runs in the suite's time (a shorter redelivery timeout, a second
	// partition for a consumer to fail over to).
	Scenario map[string]string
}

// Promises reports whether the registration's design keeps promise.
func (r Registration) Promises(design, promise string) bool {
	for _, p := range r.Conformance[design].Promises {
		if p == promise {
			return true
		}
	}
	return false
}

// CanRun says why the engine cannot run on this machine (Requires), or nil.
func (r Registration) CanRun() error {
	if r.Requires == nil {
		return nil
	}
	return r.Requires()
}
