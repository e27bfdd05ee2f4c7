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
		n := &Nack{ID: ID{i, 0}, DeliveryTime: int64(100 + i), DeliveryCount: int64(i), Consumer: c}
		g.PEL.Add(n)
		c.PEL.Add(n)
	}
	return s
}

// TestDumpRoundTrip: a value decodes to one that dumps identically.
func TestDumpRoundTrip(t *testing.T) {
	l := &List{}
	l.PushRight([]byte("a"))
	l.PushLeft([]byte("b"))
	for _, v := range []any{&String{B: []byte("hello")}, l, sampleStream(), NewStream()} {
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
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeDump(b)
		if err == nil && v == nil {
			t.Fatal("nil value without an error")
		}
	})
}
