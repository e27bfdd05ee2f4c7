package store

import (
	"bytes"
	"encoding/hex"
	"math/rand"
	"testing"
)

// TestLZFGolden: rdbAppendStr with LZF writes what redis-server 7.0.15 DUMPs for these strings
// (rdbcompression yes; the payload without its type byte and footer): a run longer than one
// back reference, text, a match ending at the input's last byte (twice: liblzf 3.5 would not
// take the second, 3 bytes from the end), a 1,200-byte input repeating
// itself at distance 600, and a string that saves only 3 bytes, so is written plain.
func TestLZFGolden(t *testing.T) {
	inc := make([]byte, 1200)
	for i := range inc {
		inc[i] = byte(i % 600 % 251)
	}
	ends := make([]byte, 0, 49)
	for i := 30; i < 60; i++ {
		ends = append(ends, byte(i))
	}
	ends = append(ends, bytes.Repeat([]byte("r"), 19)...)
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"21a", bytes.Repeat([]byte("a"), 21), "c30615016161e00a00"},
		{"text", []byte("the quick brown fox jumps over the lazy dog; the quick brown fox jumps over the lazy dog"),
			"c33540581f74686520717569636b2062726f776e20666f78206a756d7073206f7665722074201e086c617a7920646f673b600de01c2c016f67"},
		{"run300", bytes.Repeat([]byte("x"), 300), "c30c412c017878e0ff00e01700017878"},
		{"ends17", ends, "c326311e1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b72e00700017272"},
		{"abab", bytes.Repeat([]byte("abcdefghij"), 7)[:65], "c31240410a6162636465666768696a61e02b09016465"},
		{"match-at-end", []byte("babbababbbbbbbbababaabaa"), "c312180462616262612001a000400a006120020061"},
		{"saves3", []byte("abcdefghijklmnopqrstuvabc"), "196162636465666768696a6b6c6d6e6f70717273747576616263"},
		{"inc", inc, "c3411644b01f000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f1f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f1f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f1f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f1fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf1fc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf1be0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fa00e0fffae14bf5e1ff5ce14c5ce3f052016061"},
	}
	for _, tc := range cases {
		if got := hex.EncodeToString(rdbAppendStr(nil, tc.in, true)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if got := rdbAppendStr(nil, tc.in, false); !bytes.Equal(got, rdbAppendString(nil, tc.in)) || got[0] == 0xc3 {
			t.Errorf("%s: compressed without lzf: %x", tc.name, got)
		}
	}
	if got := rdbAppendStr(nil, bytes.Repeat([]byte("a"), 20), true); got[0] != 20 {
		t.Errorf("20 bytes compressed: %x", got)
	}
}

// TestLZFRoundTrip: lzfCompress's output decompresses to its input, fits the bound it was given
// (nil when it does not), and is the same on a second call (the reused hash table holds nothing
// of the first).
func TestLZFRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 600; i++ {
		n := 1 + rng.Intn(1<<uint(1+rng.Intn(15)))
		in := make([]byte, n)
		alpha := 1 + rng.Intn(256)
		for j := range in {
			if j > 8 && rng.Intn(4) == 0 { // copy an earlier byte: matches at every distance
				in[j] = in[j-1-rng.Intn(min(j, 9000))]
			} else {
				in[j] = byte(rng.Intn(alpha))
			}
		}
		bound := n - rng.Intn(n/2+1) + rng.Intn(8)
		c := lzfCompress(in, bound)
		if c == nil {
			if full := lzfCompress(in, 2*n+64); full == nil {
				t.Fatalf("n=%d: no output even with room", n)
			}
			continue
		}
		if len(c) > bound {
			t.Fatalf("n=%d: %d bytes, bound %d", n, len(c), bound)
		}
		out, ok := lzfDecompress(c, n)
		if !ok || !bytes.Equal(out, in) {
			t.Fatalf("n=%d: round trip differs", n)
		}
		if again := lzfCompress(in, bound); !bytes.Equal(again, c) {
			t.Fatalf("n=%d: second call differs", n)
		}
	}
	if lzfCompress(nil, 10) != nil || lzfCompress([]byte("abc"), 0) != nil {
		t.Error("empty input or bound: want nil")
	}
}

// BenchmarkLZFCompress: compressing a 4 KiB listpack-like buffer (text with repeats), as DUMP of
// a hash or a stream node does. Run with -benchmem: one allocation (the output) per call.
func BenchmarkLZFCompress(b *testing.B) {
	var in []byte
	for i := 0; len(in) < 4096; i++ {
		in = append(in, "field:"...)
		in = append(in, byte('0'+i%10), byte('0'+i/10%10))
		in = append(in, " value-of-some-length "...)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if lzfCompress(in, len(in)-4) == nil {
			b.Fatal("not compressed")
		}
	}
}

// FuzzLZF: whatever the input and bound, lzfCompress does not panic, fits the bound and
// decompresses to its input.
func FuzzLZF(f *testing.F) {
	f.Add([]byte("babbababbbbbbbbababaabaa"), 20)
	f.Add(bytes.Repeat([]byte("x"), 600), 10)
	f.Add([]byte{0, 1, 2, 0, 1, 2, 0, 1}, 1)
	f.Fuzz(func(t *testing.T, in []byte, bound int) {
		if bound < 0 || bound > 2*len(in)+64 {
			return
		}
		c := lzfCompress(in, bound)
		if c == nil {
			return
		}
		if out, ok := lzfDecompress(c, len(in)); len(c) > bound || !ok || !bytes.Equal(out, in) {
			t.Fatalf("len %d bound %d: %d bytes, round trip ok=%v", len(in), bound, len(c), ok)
		}
	})
}
