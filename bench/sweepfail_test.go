package bench_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"qbench/engines"
	"qbench/engines/nullq"
	"qbench/results"
)

// holdingEngine is a test-only engine that holds every message: its consumers read nothing, and
// its final sweep fails. Every acknowledged message is still in it at the end.
type holdingEngine struct{ *nullq.Engine }

const holdingName = "holding-sweep-fails"

var errSweepRefused = errors.New("the sweep's connection was refused")

func init() {
	engines.Register(engines.Registration{
		Name:    holdingName,
		Designs: []string{"queue"},
		Summary: "a test-only engine: holds every message, and its final sweep fails",
		New: func(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
			e, err := nullq.New(ctx, spec)
			if err != nil {
				return nil, err
			}
			return holdingEngine{e.(*nullq.Engine)}, nil
		},
	})
}

// NewProducer's producer refuses its first 120 messages, each with an error of its own: more
// distinct errors than a result keeps, ahead of the sweep's.
func (e holdingEngine) NewProducer(ctx context.Context, id int) (engines.Producer, error) {
	p, err := e.Engine.NewProducer(ctx, id)
	return &refusingProducer{Producer: p}, err
}

type refusingProducer struct {
	engines.Producer
	refused int
}

func (p *refusingProducer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	if p.refused < 120 {
		for i := range payloads {
			p.refused++
			errs[i] = fmt.Errorf("refused message %d", p.refused)
		}
		return
	}
	p.Producer.Send(ctx, payloads, errs)
}

func (holdingEngine) NewConsumer(ctx context.Context, _ int) (engines.Consumer, error) {
	return idleConsumer{}, nil
}

func (holdingEngine) Sweep(context.Context, func(int, []byte)) error { return errSweepRefused }

// idleConsumer waits a little and reads nothing.
type idleConsumer struct{}

func (idleConsumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	select {
	case <-time.After(20 * time.Millisecond):
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
func (idleConsumer) Ack(context.Context, []engines.Delivery) error { return nil }
func (idleConsumer) Close() error                                  { return nil }

// A run whose final sweep fails counts what it did not read as lost, though the engine may still
// hold it (this one holds all of it): the result says so with the sweep-failed flag, even after
// more distinct errors than a result keeps, and a gate on lost is inconclusive rather than
// failed.
func TestFailedSweepFlagsLost(t *testing.T) {
	t.Parallel()
	sc := scenario(t, `
engine: `+holdingName+`
producers: 1
consumers: 1
rate: 400
duration: 1s
warmup: 0s
drain_timeout: 200ms
`)
	r := run(t, sc)
	l := r.Summary.Ledger
	if l.Acked == 0 || l.Lost != l.Acked || l.Queued != 0 || r.Summary.ProduceErrors != 120 || len(r.Errors) <= 100 {
		t.Logf("%d distinct errors", len(r.Errors))
		t.Fatalf("acked %d, lost %d, queued %d, failed %d: want every acknowledged message counted lost, 120 refused, and the sweep's error past the 100 kept",
			l.Acked, l.Lost, l.Queued, r.Summary.ProduceErrors)
	}
	if !slices.ContainsFunc(r.Errors, func(e results.ErrorCount) bool {
		return e.Where == results.ErrorWhereSweep && e.Message == errSweepRefused.Error()
	}) {
		t.Fatalf("errors %+v lack the sweep's", r.Errors)
	}
	tr := results.Assess(r)
	if tr.Trusted() || !slices.Contains(tr.Codes(), results.CodeSweepFailed) {
		t.Fatalf("trust %+v, want flagged %s", tr, results.CodeSweepFailed)
	}
	g, err := results.ParseGate("lost == 0")
	if err != nil {
		t.Fatal(err)
	}
	gs := results.CheckGates([]results.Gate{g}, nil, r, results.GateOptions{})
	if gs[0].Verdict != results.GateInconclusive || !strings.Contains(gs[0].Why, results.CodeSweepFailed) {
		t.Errorf("lost == 0: %+v, want inconclusive for %s", gs[0], results.CodeSweepFailed)
	}
}
