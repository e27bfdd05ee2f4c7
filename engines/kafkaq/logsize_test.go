package kafkaq

import (
	"os"
	"path/filepath"
	"testing"
)

// The topic's log bytes are its partitions' segments on every broker's disk: the .log files
// only (the index files beside them are preallocated), and no other topic's, even one whose name
// begins with this one's, nor a partition being deleted.
func TestTopicLogBytes(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(dir, name string, size int) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "qb-0/00000000000000000000.log", 1000)
	write(a, "qb-0/00000000000000000000.index", 10<<20)
	write(a, "qb-0/00000000000000000000.timeindex", 10<<20)
	write(a, "qb-1/00000000000000000000.log", 300)
	write(a, "qb-1/00000000000000000900.log", 200)
	write(b, "qb-0/00000000000000000000.log", 1000) // a replica on the second broker
	write(a, "qb-x-0/00000000000000000000.log", 7777)
	write(a, "qb-2.abc-delete/00000000000000000000.log", 5555)
	write(a, "other-0/00000000000000000000.log", 9999)
	for _, tc := range []struct {
		name   string
		dirs   []string
		topic  string
		want   int64
		wantOK bool
	}{
		{"two brokers", []string{a, b}, "qb", 2500, true},
		{"one broker", []string{a}, "qb", 1500, true},
		{"a longer name", []string{a}, "qb-x", 7777, true},
		{"not on disk", []string{a, b}, "absent", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, ok := topicLogBytes(tc.dirs, tc.topic)
			if n != tc.want || ok != tc.wantOK {
				t.Errorf("topicLogBytes(%s) = %d, %v; want %d, %v", tc.topic, n, ok, tc.want, tc.wantOK)
			}
		})
	}
}
