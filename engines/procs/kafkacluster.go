package procs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// KafkaCluster is n KRaft nodes, each a combined broker and controller, on loopback: one cluster
// ID, every node a voter of the controller quorum, so the metadata log survives the loss of a
// minority (one node of three).
type KafkaCluster struct {
	Nodes []*Kafka // node.id i+1 at index i
}

// StartKafkaCluster formats and starts n nodes on free loopback ports and returns once every
// node answers cfg.Probe. With n == 1 the node lives in cfg.Dir itself (the single-broker
// layout); otherwise node i lives in cfg.Dir/node-<i>. A node cannot finish starting until a
// majority of the quorum is up, so the nodes are formatted and started concurrently. On error
// every node started is killed.
func StartKafkaCluster(ctx context.Context, cfg KafkaConfig, n int) (*KafkaCluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("procs: a Kafka cluster needs at least one node (got %d)", n)
	}
	if cfg.Home == "" {
		h, err := KafkaHome()
		if err != nil {
			return nil, err
		}
		cfg.Home = h
	}
	if cfg.StartTimeout == 0 {
		// n JVMs formatting and starting at once share the machine's cores: on a busy 2-core
		// machine three nodes took over 60 s.
		cfg.StartTimeout = time.Duration(60+45*(n-1)) * time.Second
	}
	version, err := kafkaVersion(cfg.Home)
	if err != nil {
		return nil, fmt.Errorf("procs: %s: %w", cfg.Home, err)
	}
	ports, err := FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	quorum := make([]int, n)
	for i := range n {
		quorum[i] = ports[2*i+1]
	}
	c := &KafkaCluster{}
	id := clusterID()
	for i := range n {
		nc := cfg
		if n > 1 {
			nc.Dir = filepath.Join(cfg.Dir, "node-"+strconv.Itoa(i+1))
			if err := os.Mkdir(nc.Dir, 0o755); err != nil {
				return nil, err
			}
		}
		k := &Kafka{cfg: nc, id: i + 1, quorum: quorum, cluster: id,
			port: ports[2*i], ctrlPort: ports[2*i+1], version: version}
		k.settings = k.properties()
		if err := writeProperties(k.propertiesPath(), k.settings); err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, k)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	if err := c.each(func(k *Kafka) error { return k.format(ctx) }); err != nil {
		return nil, err
	}
	if err := c.each(func(k *Kafka) error { return k.Start(ctx) }); err != nil {
		_ = c.Kill()
		return nil, err
	}
	return c, nil
}

// each runs f on every node concurrently and joins the errors, each naming its node.
func (c *KafkaCluster) each(f func(k *Kafka) error) error {
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, k := range c.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(k); err != nil {
				errs[i] = fmt.Errorf("node %d: %w", k.ID(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Addrs are the nodes' bootstrap addresses, in node.id order.
func (c *KafkaCluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, k := range c.Nodes {
		out[i] = k.Addr()
	}
	return out
}

// Node returns the node with this node.id, or nil.
func (c *KafkaCluster) Node(id int) *Kafka {
	if id < 1 || id > len(c.Nodes) {
		return nil
	}
	return c.Nodes[id-1]
}

// PIDs are the running nodes' process IDs (0 for a node that is down), in node.id order.
func (c *KafkaCluster) PIDs() []int {
	out := make([]int, len(c.Nodes))
	for i, k := range c.Nodes {
		out[i] = k.PID()
	}
	return out
}

// Start starts every node that is down, concurrently (a whole cluster killed at once cannot
// elect a controller one node at a time), and waits until each answers.
func (c *KafkaCluster) Start(ctx context.Context) error {
	return c.each(func(k *Kafka) error {
		if k.PID() != 0 {
			return nil
		}
		return k.Start(ctx)
	})
}

// Kill crashes every node (SIGKILL to each process group) at once.
func (c *KafkaCluster) Kill() error { return c.each((*Kafka).Kill) }

// Stop shuts every node down cleanly (SIGTERM), each killed if it takes longer than grace. The
// nodes stop concurrently: a node stopping last, alone, has no quorum for its controlled
// shutdown and would wait out its grace.
func (c *KafkaCluster) Stop(grace time.Duration) error {
	return c.each(func(k *Kafka) error { return k.Stop(grace) })
}
