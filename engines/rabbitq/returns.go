package rabbitq

import (
	"errors"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"
)

// errReturned is a publish the broker routed to no queue. With confirms, RabbitMQ confirms such a
// message all the same (it was "handled"); only a mandatory publish learns of it, by a
// basic.return sent before the confirm. It happens when the exchange's queue is missing, and
// for a stream on a node that has just restarted: the stream is not routable again until the
// stream coordinator has restarted it (README, "A stream after a restart").
var errReturned = errors.New("rabbitmq: publish returned by the broker: routed to no queue")

// returns collects the messages the broker returned on one channel, so that Send can fail the
// publishes they belong to rather than count them acknowledged.
//
// amqp091-go hands a basic.return to the listener before it reads the frames after it, so a
// message's return has reached the loop below before its confirm is seen. The loop receives
// returns and answers sync requests one at a time, so a sync asked for after a confirm is
// answered only once every return before that confirm is recorded.
type returns struct {
	ch     *amqp.Channel
	in     chan amqp.Return
	sync   chan chan struct{}
	closed chan struct{}

	mu  sync.Mutex
	got map[string]amqp.Return // by body: every payload carries its own stamp
}

// watchReturns listens for ch's returns until ch closes.
func watchReturns(ch *amqp.Channel) *returns {
	r := &returns{ch: ch, in: ch.NotifyReturn(make(chan amqp.Return)), sync: make(chan chan struct{}),
		closed: make(chan struct{}), got: map[string]amqp.Return{}}
	go r.loop()
	return r
}

func (r *returns) loop() {
	defer close(r.closed)
	for {
		select {
		case ret, ok := <-r.in:
			if !ok {
				return // the channel closed; it sends no more returns
			}
			r.mu.Lock()
			r.got[string(ret.Body)] = ret
			r.mu.Unlock()
		case done := <-r.sync:
			close(done)
		}
	}
}

// fail sets errs[i] for each payload confirmed (errs[i] nil) that the broker returned. Call it
// after the confirms were awaited.
func (r *returns) fail(payloads [][]byte, errs []error) {
	done := make(chan struct{})
	select {
	case r.sync <- done:
		<-done
	case <-r.closed:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		return
	}
	for i, b := range payloads {
		if ret, ok := r.got[string(b)]; ok {
			if errs[i] == nil {
				errs[i] = fmt.Errorf("%w (%d %s)", errReturned, ret.ReplyCode, ret.ReplyText)
			}
			delete(r.got, string(b))
		}
	}
}
