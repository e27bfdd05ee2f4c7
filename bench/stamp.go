package bench

import (
	"encoding/binary"
	"errors"
)

// StampSize is the length of the header every message starts with.
const StampSize = 32

var stampMagic = [4]byte{'q', 'b', 'm', '1'}

// Stamp identifies a message and carries its intended send time.
type Stamp struct {
	// RunTag is derived from the run ID; messages of another run are recognised and ignored.
	RunTag uint64
	// Producer is the producer's index.
	Producer uint32
	// Seq is the producer's sequence number, from 0.
	Seq uint64
	// IntendedNs is when the schedule said to send it, in nanoseconds since the run's epoch on the
	// monotonic clock of the process that runs producers and consumers; in a segmented run, since
	// the shared start instant on the engine's clock, which every segment can read (segment.go).
	IntendedNs int64
}

var errNotStamped = errors.New("message has no qbench stamp")

// Encode writes the stamp over the first StampSize bytes of buf (len(buf) >= StampSize) and
// leaves the rest alone: the content after the stamp is written once per buffer by fillContent
// (sizes.go), so a send rewrites only the stamp.
func (s Stamp) Encode(buf []byte) {
	copy(buf, stampMagic[:])
	binary.BigEndian.PutUint32(buf[4:], s.Producer)
	binary.BigEndian.PutUint64(buf[8:], s.RunTag)
	binary.BigEndian.PutUint64(buf[16:], s.Seq)
	binary.BigEndian.PutUint64(buf[24:], uint64(s.IntendedNs))
}

// DecodeStamp reads a stamp from the start of a payload.
func DecodeStamp(b []byte) (Stamp, error) {
	if len(b) < StampSize || [4]byte(b[:4]) != stampMagic {
		return Stamp{}, errNotStamped
	}
	return Stamp{
		Producer:   binary.BigEndian.Uint32(b[4:]),
		RunTag:     binary.BigEndian.Uint64(b[8:]),
		Seq:        binary.BigEndian.Uint64(b[16:]),
		IntendedNs: int64(binary.BigEndian.Uint64(b[24:])),
	}, nil
}

// fillPattern writes the filler that follows the stamp.
func fillPattern(buf []byte) {
	for i := StampSize; i < len(buf); i++ {
		buf[i] = 'a' + byte(i%26)
	}
}

// runTag hashes a run ID (FNV-1a).
func runTag(runID string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(runID); i++ {
		h ^= uint64(runID[i])
		h *= 1099511628211
	}
	return h
}
