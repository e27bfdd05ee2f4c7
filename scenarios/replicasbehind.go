package scenarios

// holdsReplicas reports whether a fault kind takes replicas_behind: the kills of a replicated
// primary, whose replicas can be held behind before it dies.
func holdsReplicas(k FaultKind) bool {
	return k == FaultPrimaryKill || k == FaultPartitionLeaderKill
}

// validateReplicasBehind checks a fault's replicas_behind: only on a primary kill, not negative,
// and over before the run is (the kill comes at the end of the hold).
func (s *Scenario) validateReplicasBehind(f Fault, field string, bad func(field, format string, args ...any)) {
	switch {
	case f.ReplicasBehind == 0:
	case !holdsReplicas(f.Kind):
		bad(field+".replicas_behind", "only primary-kill and partition-leader-kill hold replicas behind (kind is %s)", f.Kind)
	case f.ReplicasBehind < 0:
		bad(field+".replicas_behind", "must not be negative (got %s)", f.ReplicasBehind)
	case s.Duration > 0 && f.At+f.ReplicasBehind >= s.Duration:
		bad(field+".replicas_behind", "the kill would come at %s, not before the run's end at %s; hold them for less than %s", f.At+f.ReplicasBehind, s.Duration, s.Duration-f.At)
	}
}
