package store

import (
	"bytes"
	"testing"
)

func sampleStream() *Stream {
	s := NewStream()
	for i := uint64(1); i <= 250; i++ {
		s.Append(ID{i, 0}, [][]byte{[]byte("f"), []byte{byte(i)}})
	}
	s.Delete(ID{7, 0})
	g, _ := s.CreateGroup("g", ID{10, 0}, 10)
	c, _ := g.CreateConsumer("c", 5)
	g.CreateConsumer("idle", 6)
	for i := uint64(8); i <= 10; i++ {
		c.PEL.Add(g.PEL.Add(Nack{ID: ID{i, 0}, DeliveryTime: int64(100 + i), DeliveryCount: int64(i), Consumer: c}))
	}
	return s
}

// TestDumpRoundTrip: a value decodes to one that dumps identically.
func TestDumpRoundTrip(t *testing.T) {
	l := &List{}
	l.PushRight([]byte("a"))
	l.PushLeft([]byte("b"))
	ints, strs, small, big := NewSet(), NewSet(), NewHash(), NewHash()
	for i := 0; i < 20; i++ {
		ints.Add([]byte{byte('0' + i%10)}, 512)
		strs.Add([]byte{'m', byte('a' + i)}, 512)
		small.Set([]byte{'f', byte('z' - i)}, []byte{byte(i)}, 512, 64)
		big.Set([]byte{'f', byte('a' + i)}, []byte{byte(i)}, 4, 64)
	}
	if !ints.IsIntset() || strs.IsIntset() || !small.IsListpack() || big.IsListpack() {
		t.Fatal("unexpected encodings")
	}
	for _, v := range []any{&String{B: []byte("hello")}, l, sampleStream(), NewStream(), ints, strs, small, big, NewSet(), NewHash()} {
		b := AppendDump(nil, v)
		got, err := DecodeDump(b)
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		if b2 := AppendDump(nil, got); !bytes.Equal(b, b2) {
			t.Fatalf("%T: dump differs after a round trip", v)
		}
	}
}

// FuzzDecodeDump: a damaged dump is refused, never a panic.
func FuzzDecodeDump(f *testing.F) {
	f.Add(AppendDump(nil, sampleStream()))
	f.Add(AppendDump(nil, &String{B: []byte("x")}))
	h := NewHash()
	h.Set([]byte("f"), []byte("v"), 512, 64)
	f.Add(AppendDump(nil, h))
	st := NewSet()
	st.Add([]byte("7"), 512)
	f.Add(AppendDump(nil, st))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeDump(b)
		if err == nil && v == nil {
			t.Fatal("nil value without an error")
		}
	})
}
