package redisq

import (
	"context"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// DeadLetters reads the design's dead-letter store without consuming it
// (engines.DeadLetterReader): the stream's dead-letter stream, the reliable list's dead-letter
// list. The list and pub/sub designs have none.
func (e *engine) DeadLetters(ctx context.Context, found func(payload []byte)) error {
	d, ok := e.design.(interface {
		deadLetters(ctx context.Context, found func([]byte)) error
	})
	if !ok {
		return engines.ErrNothingStored
	}
	return d.deadLetters(ctx, found)
}

// deadLetters reads the dead-letter stream a page at a time; an entry without the payload field
// (written by something else) is skipped.
func (s *streamDesign) deadLetters(ctx context.Context, found func([]byte)) error {
	return s.rangeAfter(ctx, s.dead, "0-0", func(m redis.XMessage) {
		if v, ok := m.Values[streamField].(string); ok {
			found([]byte(v))
		}
	})
}

// deadLetters reads the dead-letter list a page at a time, oldest first (LPUSH puts the newest
// at the head).
func (r *reliableDesign) deadLetters(ctx context.Context, found func([]byte)) error {
	for end := int64(-1); ; end -= sweepPage {
		page, err := r.client.LRange(ctx, r.dead, end-sweepPage+1, end).Result()
		if err != nil {
			return err
		}
		for i := len(page) - 1; i >= 0; i-- {
			found([]byte(page[i]))
		}
		if len(page) < sweepPage {
			return nil
		}
	}
}
