package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// V2 encoding cookies (HdrHistogram's, with the word size 8 in the low bits, as hdrhistogram-go
// writes them).
const (
	v2EncodingCookie           = hdrhistogram.V2EncodingCookieBase | 0x10
	v2CompressedEncodingCookie = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
)

// histEncoder is one reusable zlib writer and its buffers. hdrhistogram-go's Encode makes a new
// zlib writer at BestCompression for every histogram, most of a MiB of compressor state; the
// sampler encodes each latency kind's histogram once a second, and those writers were a third
// of qbench's allocations at 10,000 msg/s (GC cycles, so stop-the-world pauses, in proportion).
type histEncoder struct {
	raw, packed bytes.Buffer
	z           *zlib.Writer
}

// histEncoders are the idle encoders: a free list rather than a sync.Pool, which may drop what it
// holds at any GC (and does at random under the race detector), when the point is to keep one.
var histEncoders struct {
	sync.Mutex
	free []*histEncoder
}

// maxIdleEncoders bounds the free list: the sampler encodes one histogram at a time; a few more
// are for results written meanwhile (sweeps, merges).
const maxIdleEncoders = 4

func getEncoder() *histEncoder {
	histEncoders.Lock()
	defer histEncoders.Unlock()
	if n := len(histEncoders.free); n > 0 {
		e := histEncoders.free[n-1]
		histEncoders.free = histEncoders.free[:n-1]
		return e
	}
	e := &histEncoder{}
	e.z, _ = zlib.NewWriterLevel(&e.packed, zlib.BestCompression) // the level is valid
	return e
}

func putEncoder(e *histEncoder) {
	histEncoders.Lock()
	defer histEncoders.Unlock()
	if len(histEncoders.free) < maxIdleEncoders {
		histEncoders.free = append(histEncoders.free, e)
	}
}

// encodeV2 is hdrhistogram-go's Encode(V2CompressedEncodingCookieBase), byte for byte (tested
// against it), with a pooled zlib writer. What it allocates is a copy of the counts (Export, the
// only way to read them) and the result.
func encodeV2(h *hdrhistogram.Histogram) (string, error) {
	snap := h.Export()
	e := getEncoder()
	defer putEncoder(e)
	e.raw.Reset()
	e.packed.Reset()

	// The counts up to the maximum's (hdrhistogram-go: countsIndexFor(Max())+1, at least 1), as
	// ZigZag LEB128 longs, a run of zeros as its negated length.
	limit := 1
	for i := len(snap.Counts) - 1; i > 0; i-- {
		if snap.Counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	var header [40]byte
	e.raw.Write(header[:]) // filled in below, once the payload's length is known
	var b [binary.MaxVarintLen64]byte
	for i := 0; i < limit; {
		c := snap.Counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && snap.Counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		e.raw.Write(b[:putZigZag(b[:], c)])
	}
	raw := e.raw.Bytes()
	ratio := snap.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	binary.BigEndian.PutUint32(raw[0:], uint32(v2EncodingCookie))
	binary.BigEndian.PutUint32(raw[4:], uint32(len(raw)-40))
	binary.BigEndian.PutUint32(raw[8:], 0) // normalizing index offset: hdrhistogram-go writes 0
	binary.BigEndian.PutUint32(raw[12:], uint32(int32(snap.SignificantFigures)))
	binary.BigEndian.PutUint64(raw[16:], uint64(snap.LowestTrackableValue))
	binary.BigEndian.PutUint64(raw[24:], uint64(snap.HighestTrackableValue))
	binary.BigEndian.PutUint64(raw[32:], math.Float64bits(ratio))

	e.z.Reset(&e.packed)
	if _, err := e.z.Write(raw); err != nil {
		return "", err
	}
	if err := e.z.Close(); err != nil {
		return "", err
	}
	packed := e.packed.Bytes()
	out := make([]byte, 8+len(packed))
	binary.BigEndian.PutUint32(out[0:], uint32(v2CompressedEncodingCookie))
	binary.BigEndian.PutUint32(out[4:], uint32(len(packed)))
	copy(out[8:], packed)
	return base64.StdEncoding.EncodeToString(out), nil
}

// putZigZag writes v as HdrHistogram's ZigZag LEB128-64b9B: up to 8 bytes of 7 bits, the ninth
// (if needed) of all 8 remaining bits. It returns the length.
func putZigZag(b []byte, v int64) int {
	u := uint64((v << 1) ^ (v >> 63))
	n := 0
	for n < 8 {
		if u>>7 == 0 {
			b[n] = byte(u)
			return n + 1
		}
		b[n] = byte(u&0x7F) | 0x80
		u >>= 7
		n++
	}
	b[8] = byte(u)
	return 9
}
