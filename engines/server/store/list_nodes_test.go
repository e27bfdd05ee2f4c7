package store

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestLpEntrySize: the node accounting's entry size is the bytes appendListpack (Redis's
// encoding, checked against redis-server by the DUMP differential tests) spends on the element,
// for integers at every width's edges, non-canonical integers and strings at every header's.
func TestLpEntrySize(t *testing.T) {
	vals := []string{"", "0", "-0", "00", "+1", "1", "127", "128", "-1", "-4096", "4095", "4096", "-4097",
		"32767", "-32768", "32768", "8388607", "-8388608", "8388608", "2147483647", "-2147483648",
		"2147483648", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"-9223372036854775809", "12345678901234567890", "1 ", "1a", "-", "a"}
	for _, n := range []int{62, 63, 64, 65, 125, 126, 127, 128, 4093, 4094, 4095, 4096, 16375, 16376, 16377, 16383, 16384} {
		vals = append(vals, strings.Repeat("x", n))
	}
	for _, v := range vals {
		want := len(appendListpack(nil, [][]byte{[]byte(v)})) - lpHeader
		if got := lpEntrySize([]byte(v)); got != want {
			t.Errorf("lpEntrySize(%.20q, %d bytes) = %d, listpack has %d", v, len(v), got, want)
		}
	}
}

// TestListNodesFollowElements: through random pushes, pops, LSET, LREM, LINSERT and LTRIM at
// several fills, the nodes DUMP writes count every element once, each listpack node's size
// stays within the fill's bound unless it holds one element, and a node count of one-sided
// histories matches the rule applied from the pushed end.
func TestListNodesFollowElements(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	val := func() []byte {
		switch rng.Intn(4) {
		case 0:
			return fmt.Append(nil, rng.Intn(100000)-500)
		case 1:
			return bytes.Repeat([]byte("y"), 1+rng.Intn(20))
		case 2:
			return bytes.Repeat([]byte("z"), 200+rng.Intn(400))
		}
		return bytes.Repeat([]byte("w"), 3000+rng.Intn(7000))
	}
	for _, fill := range []int{-5, -2, -1, 0, 3, 100} {
		l := NewList(fill)
		for op := 0; op < 1500; op++ {
			switch r := rng.Intn(10); {
			case r < 3:
				l.PushRight(val())
			case r < 5:
				l.PushLeft(val())
			case r < 6:
				l.PopLeft()
			case r < 7:
				l.PopRight()
			case r < 8 && l.Len() > 0:
				l.SetIndex(rng.Intn(l.Len()), val())
			case r < 9 && l.Len() > 0:
				e, _ := l.Index(rng.Intn(l.Len()))
				if rng.Intn(2) == 0 {
					l.Remove(e, rng.Intn(3)-1)
				} else {
					l.Insert(e, val(), rng.Intn(2) == 0)
				}
			case l.Len() > 10 && rng.Intn(20) == 0:
				l.Trim(rng.Intn(3), -1-rng.Intn(3))
			}
			if op%100 == 0 || op == 1499 {
				checkNodes(t, l, fmt.Sprintf("fill %d, op %d", fill, op))
			}
		}
	}
	// LPUSH only: the nodes from the tail, the head node the partial one.
	l := NewList(-1)
	for i := 0; i < 1000; i++ {
		l.PushLeft([]byte("0123456789abcdef"))
	}
	nodes := l.nodes()
	if len(nodes) < 3 || nodes[len(nodes)-1].n != nodes[1].n || nodes[0].n >= nodes[1].n {
		t.Errorf("LPUSH only: node counts %v", nodes)
	}
}

func checkNodes(t *testing.T, l *List, label string) {
	t.Helper()
	nodes := l.nodes()
	total := 0
	for _, nd := range nodes {
		total += int(nd.n)
	}
	if total != l.Len() {
		t.Fatalf("%s: nodes count %d elements, the list has %d", label, total, l.Len())
	}
	maxSz, _ := nodeLimits(l.Fill())
	ni := 0
	l.eachNode(func(els [][]byte, plain bool) {
		if sz := len(appendListpack(nil, els)); len(els) > 1 && sz > maxSz || int(nodes[ni].sz) != sz {
			t.Fatalf("%s: node %d of %d elements: size %d, its listpack %d (limit %d)", label, ni, len(els), nodes[ni].sz, sz, maxSz)
		}
		ni++
	})
}
