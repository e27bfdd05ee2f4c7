package store

import (
	"sort"
)

// InvalidEntriesRead is SCG_INVALID_ENTRIES_READ: the group's read counter is unknown.
const InvalidEntriesRead = -1

// Group is a consumer group.
type Group struct {
	Name        string
	LastID      ID
	EntriesRead int64
	PEL         *PEL
	Consumers   map[string]*Consumer
}

// Consumer is a consumer of a group.
type Consumer struct {
	Name     string
	SeenTime int64 // Unix ms of its last read or claim
	PEL      *ConsumerPEL
}

// Nack is a pending (delivered, unacknowledged) entry. The group's PEL stores Nacks by value;
// a *Nack from Get, Add or Ascend points into that storage and is valid until the group's
// PEL next gains or loses an entry, so callers change the consumer's PEL first and the
// group's last.
type Nack struct {
	ID            ID
	DeliveryTime  int64 // Unix ms
	DeliveryCount int64
	Consumer      *Consumer
}

func (n Nack) key() ID { return n.ID }
func (a ID) key() ID   { return a }

// PEL is a group's pending entries list: 40-byte Nack records sorted by ID in fixed-size
// chunks (chunked.go), found by binary search, with no per-entry heap object or map. A
// consumer's PEL holds only the IDs (16 bytes each) and finds the rest here, so a pending
// entry costs about 56 bytes against Redis's ~96 (a streamNACK in two rax trees).
type PEL struct{ t chunked[Nack] }

// NewPEL returns an empty PEL.
func NewPEL() *PEL { return &PEL{} }

// Len is the number of pending entries.
func (p *PEL) Len() int { return p.t.n }

// Get returns the entry for id, or nil.
func (p *PEL) Get(id ID) *Nack { return p.t.get(id) }

// Add inserts n (its ID must not be pending) and returns the stored entry.
func (p *PEL) Add(n Nack) *Nack { return p.t.insert(n) }

// Remove deletes id and reports whether it was pending.
func (p *PEL) Remove(id ID) bool { return p.t.remove(id) }

// Ascend calls fn for entries with start <= ID <= end in order until fn returns false. fn
// may change the entry but must not add or remove entries.
func (p *PEL) Ascend(start, end ID, fn func(*Nack) bool) { p.t.ascend(start, end, fn) }

// First returns the smallest pending ID (false when empty).
func (p *PEL) First() (ID, bool) { return p.t.first() }

// Last returns the largest pending ID.
func (p *PEL) Last() (ID, bool) { return p.t.last() }

// ConsumerPEL is a consumer's share of its group's PEL: the IDs only.
type ConsumerPEL struct {
	g   *PEL
	ids chunked[ID]
}

// Len is the number of entries pending for the consumer.
func (p *ConsumerPEL) Len() int { return p.ids.n }

// Add records that n is pending for this consumer.
func (p *ConsumerPEL) Add(n *Nack) { p.ids.insert(n.ID) }

// Remove forgets id; false if it was not the consumer's.
func (p *ConsumerPEL) Remove(id ID) bool { return p.ids.remove(id) }

// Ascend is PEL.Ascend over the consumer's entries.
func (p *ConsumerPEL) Ascend(start, end ID, fn func(*Nack) bool) {
	p.ids.ascend(start, end, func(id *ID) bool {
		if n := p.g.Get(*id); n != nil {
			return fn(n)
		}
		return true
	})
}

// IDs returns the consumer's pending IDs in order.
func (p *ConsumerPEL) IDs() []ID {
	out := make([]ID, 0, p.ids.n)
	p.ids.ascend(ID{}, MaxID, func(id *ID) bool { out = append(out, *id); return true })
	return out
}

// Groups returns the groups sorted by name (Redis keeps them in a radix tree).
func (s *Stream) Groups() []*Group {
	out := make([]*Group, 0, len(s.groups))
	for _, g := range s.groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NumGroups is the number of groups.
func (s *Stream) NumGroups() int { return len(s.groups) }

// Group returns the named group or nil.
func (s *Stream) Group(name string) *Group { return s.groups[name] }

// CreateGroup adds a group; false if it exists.
func (s *Stream) CreateGroup(name string, last ID, entriesRead int64) (*Group, bool) {
	if s.groups == nil {
		s.groups = map[string]*Group{}
	}
	if _, ok := s.groups[name]; ok {
		return nil, false
	}
	g := &Group{Name: name, LastID: last, EntriesRead: entriesRead, PEL: NewPEL(), Consumers: map[string]*Consumer{}}
	s.groups[name] = g
	return g, true
}

// DestroyGroup removes a group; false if it did not exist.
func (s *Stream) DestroyGroup(name string) bool {
	if _, ok := s.groups[name]; !ok {
		return false
	}
	delete(s.groups, name)
	return true
}

// Consumer returns the named consumer, or nil.
func (g *Group) Consumer(name string) *Consumer { return g.Consumers[name] }

// CreateConsumer adds a consumer; the bool is false if it existed (which is returned).
func (g *Group) CreateConsumer(name string, nowMs int64) (*Consumer, bool) {
	if c, ok := g.Consumers[name]; ok {
		return c, false
	}
	c := &Consumer{Name: name, SeenTime: nowMs, PEL: &ConsumerPEL{g: g.PEL}}
	g.Consumers[name] = c
	return c, true
}

// DeleteConsumer removes a consumer and its pending entries, returning how many it had; -1 if
// it did not exist.
func (g *Group) DeleteConsumer(name string) int {
	c, ok := g.Consumers[name]
	if !ok {
		return -1
	}
	n := c.PEL.Len()
	for _, id := range c.PEL.IDs() {
		g.PEL.Remove(id)
	}
	delete(g.Consumers, name)
	return n
}

// Consumers returns the consumers sorted by name.
func (g *Group) SortedConsumers() []*Consumer {
	out := make([]*Consumer, 0, len(g.Consumers))
	for _, c := range g.Consumers {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Ack removes id from the group's and its consumer's PEL; false if not pending.
func (g *Group) Ack(id ID) bool {
	n := g.PEL.Get(id)
	if n == nil {
		return false
	}
	n.Consumer.PEL.Remove(id) // first: removing from the group's PEL moves n
	g.PEL.Remove(id)
	return true
}

// RangeHasTombstones is Redis's streamRangeHasTombstones: whether an entry between start and
// end (inclusive; nil end means the end of the stream) was deleted.
func (s *Stream) RangeHasTombstones(start ID, end *ID) bool {
	if s.length == 0 || s.MaxDeletedID.IsZero() {
		return false
	}
	if s.MaxDeletedID.Less(s.FirstID) {
		return false
	}
	e := MaxID
	if end != nil {
		e = *end
	}
	return !s.MaxDeletedID.Less(start) && !e.Less(s.MaxDeletedID)
}

// EstimateDistanceFromFirstEverEntry is Redis's function of that name: the logical read
// counter of id, or InvalidEntriesRead.
func (s *Stream) EstimateDistanceFromFirstEverEntry(id ID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.Compare(s.LastID) < 1 {
		return int64(s.EntriesAdded)
	}
	cmpLast := id.Compare(s.LastID)
	if cmpLast == 0 {
		return int64(s.EntriesAdded)
	} else if cmpLast > 0 {
		return InvalidEntriesRead
	}
	cmpFirst := id.Compare(s.FirstID)
	cmpXdel := s.MaxDeletedID.Compare(s.FirstID)
	if s.MaxDeletedID.IsZero() || cmpXdel < 0 {
		if cmpFirst < 0 {
			return int64(s.EntriesAdded - s.length)
		} else if cmpFirst == 0 {
			return int64(s.EntriesAdded - s.length + 1)
		}
	}
	return InvalidEntriesRead
}

// Lag is the group's lag as XINFO GROUPS reports it, and false when Redis reports null.
func (s *Stream) Lag(g *Group) (int64, bool) {
	if s.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != InvalidEntriesRead && !s.RangeHasTombstones(g.LastID, nil) {
		return int64(s.EntriesAdded) - g.EntriesRead, true
	}
	er := s.EstimateDistanceFromFirstEverEntry(g.LastID)
	if er != InvalidEntriesRead {
		return int64(s.EntriesAdded) - er, true
	}
	return 0, false
}

// Delivered advances the group past id after delivering it (Redis's streamReplyWithRange).
func (s *Stream) Delivered(g *Group, id ID) {
	if g.LastID.Less(id) {
		if g.EntriesRead != InvalidEntriesRead && !s.RangeHasTombstones(id, nil) {
			g.EntriesRead++
		} else if s.EntriesAdded != 0 {
			g.EntriesRead = s.EstimateDistanceFromFirstEverEntry(id)
		}
		g.LastID = id
	}
}
