package kafkaq

import (
	"os"
	"path/filepath"
	"strings"
)

// logSizeFact is the engine fact the runner reads at the producers' start and the consumers'
// stop: the bytes in the log now, whose growth is what the engine appended per message (the
// runner's engine_log_bytes; Redis reports aof_current_size under the same name).
const logSizeFact = "log_size_bytes"

// topicLogBytes sums the sizes of the topic's log segments (*.log in its partition directories,
// topic-N, under each broker's data directory): what the brokers appended for the run's topic,
// replicas included. The index files beside them are preallocated and left out. ok is false when
// no partition directory was found (the topic is not on these brokers' disks).
func topicLogBytes(dataDirs []string, topic string) (n int64, ok bool) {
	for _, dir := range dataDirs {
		parts, err := filepath.Glob(filepath.Join(dir, topic+"-*"))
		if err != nil {
			continue
		}
		for _, p := range parts {
			if !isPartitionDir(filepath.Base(p), topic) {
				continue
			}
			ok = true
			segs, _ := filepath.Glob(filepath.Join(p, "*.log"))
			for _, s := range segs {
				if st, err := os.Stat(s); err == nil {
					n += st.Size()
				}
			}
		}
	}
	return n, ok
}

// isPartitionDir says whether name is topic-N (not another topic's, topic-x-N, nor a partition
// being deleted, topic-N.uuid-delete).
func isPartitionDir(name, topic string) bool {
	num, found := strings.CutPrefix(name, topic+"-")
	if !found || num == "" {
		return false
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// addLogSize sets logSizeFact for brokers qbench started (their data directories are known).
func (e *engine) addLogSize(stats map[string]int64) {
	if e.cluster == nil {
		return
	}
	var dirs []string
	for _, k := range e.cluster.Nodes {
		dirs = append(dirs, k.DataDir())
	}
	if n, ok := topicLogBytes(dirs, e.topic); ok {
		stats[logSizeFact] = n
	}
}
