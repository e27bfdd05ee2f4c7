package server

import (
	"fmt"
	"testing"

	"qbench/engines/server/aof"
	"qbench/engines/server/fsys"
)

// BenchmarkReplay measures start-up replay of a log of XADD * records (entries/s).
func BenchmarkReplay(b *testing.B) {
	const n = 200000
	sim := fsys.NewSim()
	sim.MkdirAll("/d")
	l := aof.NewLayout(sim, "/d", "")
	l.Incrs, l.IncrSeqs = []string{l.IncrName(1)}, []int{1}
	if err := l.Save(); err != nil {
		b.Fatal(err)
	}
	data := []byte(aof.Magic)
	for i := 0; i < n; i++ {
		data = aof.AppendRecord(data, aof.Record{Kind: aof.KindCommand, TimeMs: 1700000000000 + int64(i/1000),
			Args: [][]byte{[]byte("XADD"), []byte("s"), []byte("*"), []byte("field"), []byte(fmt.Sprintf("value-with-some-bytes-%d", i))}})
	}
	sim.WriteFile(l.Path(l.IncrName(1)), data)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := New(Config{FS: sim, Dir: "/d", AppendOnly: true})
		if err := s.p.load(); err != nil {
			b.Fatal(err)
		}
		if got := s.p.loadedRecords; got != n {
			b.Fatalf("loaded %d", got)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}
