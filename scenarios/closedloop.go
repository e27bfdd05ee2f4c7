package scenarios

// shapeFields marks batch and in_flight.
type shapeFields uint8

const (
	shapeBatch shapeFields = 1 << iota
	shapeInFlight
)

// applyShapeDefaults fills batch and in_flight, the one place their defaults are decided. A
// closed loop (rate: max) takes the engine's closed-loop shape (Engine.ClosedLoopBatch and
// ClosedLoopInFlight, from its registration) for whichever of them the scenario does not write:
// its rate is its window (producers x in_flight batches of batch messages) over the engine's
// latency, and a window too small for the engine measures qbench's limit, not the engine. Any
// other run takes DefaultBatch and DefaultInFlight. A field this filled is filled again (a matrix
// cell may change the engine or the rate); one the scenario or a swept value wrote is kept. The
// shape is narrowed, batch first, to keep the producers' buffers within MaxBufferBytes.
func (s *Scenario) applyShapeDefaults() {
	batch, inFlight := DefaultBatch, DefaultInFlight
	if s.Rate.Max {
		if e, err := s.checks.engine(s.Engine); err == nil {
			batch, inFlight = max(e.ClosedLoopBatch, batch), max(e.ClosedLoopInFlight, inFlight)
		}
	}
	_, batchWritten := s.keys["batch"]
	_, inFlightWritten := s.keys["in_flight"]
	fillBatch := s.Batch == 0 || s.shapeDefaulted&shapeBatch != 0 && !batchWritten
	fillInFlight := s.InFlight == 0 || s.shapeDefaulted&shapeInFlight != 0 && !inFlightWritten
	if fillBatch {
		s.Batch = batch
		s.shapeDefaulted |= shapeBatch
	}
	if fillInFlight {
		s.InFlight = inFlight
		s.shapeDefaulted |= shapeInFlight
	}
	buffers := func() int64 {
		return int64(max(s.Producers, 1)) * int64(s.InFlight) * int64(s.Batch) * int64(max(s.MessageSize.Largest(), 1))
	}
	for buffers() > MaxBufferBytes {
		switch {
		case fillBatch && s.Batch > DefaultBatch:
			s.Batch /= 2
		case fillInFlight && s.InFlight > DefaultInFlight:
			s.InFlight /= 2
		default:
			return // what the scenario wrote is validation's to refuse
		}
	}
}

// ClosedLoopShape says whether a closed loop's batch and in_flight are the engine's closed-loop
// defaults (not written by the scenario), for the result's note on what set the rate.
func (s *Scenario) ClosedLoopShape() (batchDefaulted, inFlightDefaulted bool) {
	return s.shapeDefaulted&shapeBatch != 0, s.shapeDefaulted&shapeInFlight != 0
}
