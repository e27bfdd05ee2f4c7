package scenarios

import "fmt"

// CheckFaultSegments checks the faults' segment fields against a segmented run of count
// segments (qbench run --segment i/N): an engine-side fault is fired once, by the segment it
// names, which must be one of the run's. The error names the file, line and field, as loading
// does; the count is known only from the command line, so this cannot be checked at load.
func (s *Scenario) CheckFaultSegments(count int) error {
	var errs Errors
	for i, f := range s.Faults {
		if !f.Kind.EngineSide() || f.Segment < count {
			continue
		}
		errs = append(errs, &Error{File: s.file, Line: f.line, Field: fmt.Sprintf("faults.%d.segment", i),
			Msg: fmt.Sprintf("segment %d fires this %s, but the run has %d segment(s), 0 to %d: name one of them", f.Segment, f.Kind, count, count-1)})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// FiredBySegment reports whether segment index of a segmented run fires f: an engine-side fault
// in the segment it names; a consumer fault in the segment that runs its consumer (runsConsumer).
func (f Fault) FiredBySegment(index int, runsConsumer func(consumer int) bool) bool {
	if f.Kind.EngineSide() {
		return f.Segment == index
	}
	return runsConsumer(f.Consumer)
}
