package rabbitq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"qbench/engines"
)

// leaderTimeout bounds the wait for a quorum queue to elect a new leader after its leader died.
const leaderTimeout = 30 * time.Second

// queueLeader asks node i (0-based) which node leads the run's first queue; 0 when it cannot
// say (no leader yet, or the node is down), else the leader's 1-based index.
func (m *managed) queueLeader(ctx context.Context, i int) int {
	out, err := m.cluster.Nodes[i].Ctl(ctx, "list_queues", "name", "leader", "--no-table-headers", "--quiet")
	if err != nil {
		return 0
	}
	q := m.queueOf(0)
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == q {
			for j, n := range m.cluster.Nodes {
				if n.Name() == f[1] {
					return j + 1
				}
			}
		}
	}
	return 0
}

// KillLeader stops the node leading the run's first quorum queue (SIGKILL when crash, a clean
// stop otherwise) and returns once another node leads it, or once leaderTimeout has passed
// (NewLeader 0: no majority left to elect one).
func (m *managed) KillLeader(ctx context.Context, crash bool) (engines.LeaderChange, error) {
	if m.spec.Design != DesignQuorum || len(m.cluster.Nodes) < 3 {
		return engines.LeaderChange{}, errors.New("rabbitmq: a leader kill needs the quorum design on nodes: 3")
	}
	old := m.queueLeader(ctx, 0)
	if old == 0 {
		return engines.LeaderChange{}, fmt.Errorf("rabbitmq: no leader known for queue %s", m.queueOf(0))
	}
	n := m.cluster.Nodes[old-1]
	var err error
	if crash {
		err = n.Kill()
	} else {
		err = n.Stop(30 * time.Second)
	}
	ch := engines.LeaderChange{Node: old}
	if err != nil {
		return ch, err
	}
	deadline := time.Now().Add(leaderTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		for i := range m.cluster.Nodes {
			if i+1 == old {
				continue
			}
			if l := m.queueLeader(ctx, i); l != 0 && l != old {
				ch.NewLeader = l
				return ch, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ch, nil
}

// RestartNode starts node (1-based) again on its store and returns once it accepts connections.
func (m *managed) RestartNode(ctx context.Context, node int) error {
	if node < 1 || node > len(m.cluster.Nodes) {
		return fmt.Errorf("rabbitmq: no node %d", node)
	}
	return m.cluster.Nodes[node-1].Start(ctx)
}
