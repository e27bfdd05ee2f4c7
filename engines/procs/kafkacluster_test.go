package procs

import (
	"context"
	"testing"
)

// Node 2 of three knows itself and every voter, and replicates the internal topics three times.
func TestKafkaClusterNodeProperties(t *testing.T) {
	k := &Kafka{cfg: KafkaConfig{Dir: "/d/node-2"}, id: 2, quorum: []int{11, 21, 31}, port: 20, ctrlPort: 21}
	p := k.properties()
	for key, want := range map[string]string{
		"node.id":                                  "2",
		"controller.quorum.voters":                 "1@127.0.0.1:11,2@127.0.0.1:21,3@127.0.0.1:31",
		"listeners":                                "PLAINTEXT://127.0.0.1:20,CONTROLLER://127.0.0.1:21",
		"offsets.topic.replication.factor":         "3",
		"transaction.state.log.replication.factor": "3",
		"log.dirs":                                 "/d/node-2/data",
	} {
		if p[key] != want {
			t.Errorf("%s = %q, want %q", key, p[key], want)
		}
	}
	alone := (&Kafka{port: 9, ctrlPort: 10}).properties()
	if alone["offsets.topic.replication.factor"] != "1" || alone["node.id"] != "1" {
		t.Errorf("a broker alone: %v", alone)
	}
}

func TestKafkaClusterNeedsANode(t *testing.T) {
	if _, err := StartKafkaCluster(context.Background(), KafkaConfig{Home: t.TempDir()}, 0); err == nil {
		t.Fatal("a cluster of 0 nodes started")
	}
}
