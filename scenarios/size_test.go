package scenarios

import (
	"strings"
	"testing"
)

func TestParseMessageSizes(t *testing.T) {
	cases := []struct {
		yaml             string
		smallest, larges int
		payload          Payload
	}{
		{"rate: 1\nmessage_size: 100\n", 100, 100, Payload{Content: "random"}},
		{"rate: 1\n", 256, 256, Payload{Content: "random"}},
		{"rate: 1\nmessage_size: {dist: uniform, min: 64, max: 4096}\n", 64, 4096, Payload{Content: "random"}},
		{"rate: 1\nmessage_size: {dist: lognormal, median: 256, sigma: 1, max: 8192}\npayload: {content: compressible}\n", MinMessageSize, 8192, Payload{Content: "compressible", Ratio: 4}},
		{"rate: 1\nmessage_size: {dist: lognormal, median: 256, sigma: 1}\n", MinMessageSize, 13978, Payload{Content: "random"}},
		{"rate: 1\nmessage_size:\n  dist: weighted\n  sizes: [{size: 100, weight: 9}, {size: 10000, weight: 1}]\npayload: {content: compressible, ratio: 2}\n", 100, 10000, Payload{Content: "compressible", Ratio: 2}},
	}
	for _, c := range cases {
		s, err := Parse("s.yaml", []byte(c.yaml), testChecks)
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if s.MessageSize.Smallest() != c.smallest || s.MessageSize.Largest() != c.larges || s.Payload != c.payload {
			t.Fatalf("%q: sizes %d..%d payload %+v", c.yaml, s.MessageSize.Smallest(), s.MessageSize.Largest(), s.Payload)
		}
	}
}

func TestMessageSizeErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"too small", "rate: 1\nmessage_size: 8\n", "s.yaml:2: message_size: must be at least 32"},
		{"word", "rate: 1\nmessage_size: big\n", "s.yaml:2: message_size: message_size must be a number of bytes or a distribution"},
		{"unknown dist", "rate: 1\nmessage_size: {dist: pareto}\n", "s.yaml:2: message_size.dist: must be fixed, uniform, lognormal or weighted"},
		{"unknown key", "rate: 1\nmessage_size: {dist: uniform, min: 40, maxx: 50}\n", "s.yaml:2: message_size: unknown field maxx"},
		{"uniform upside down", "rate: 1\nmessage_size: {dist: uniform, min: 400, max: 50}\n", "s.yaml:2: message_size.min: a uniform size needs 32 <= min <= max"},
		{"lognormal sigma", "rate: 1\nmessage_size:\n  dist: lognormal\n  median: 256\n  sigma: 9\n", "s.yaml:5: message_size.sigma: a lognormal size needs sigma, the spread of the size's log, above 0 and at most 4 (got 9)"},
		{"lognormal too wide", "rate: 1\nmessage_size: {dist: lognormal, median: 100000, sigma: 4}\n", "s.yaml:2: message_size: must be at most 64 MiB"},
		{"weighted empty", "rate: 1\nmessage_size: {dist: weighted}\n", "s.yaml:2: message_size.sizes: a weighted size needs sizes"},
		{"weighted bad weight", "rate: 1\nmessage_size:\n  dist: weighted\n  sizes:\n    - {size: 100, weight: 0}\n", "s.yaml:5: message_size.sizes.0.weight: must be a relative weight from 1e-06 to 1e+06 (got 0)"},
		{"payload content", "rate: 1\npayload: {content: zeros}\n", "s.yaml:2: payload.content: must be random or compressible"},
		{"payload ratio", "rate: 1\npayload: {content: compressible, ratio: 0.5}\n", "s.yaml:2: payload.ratio: must be between 1 and 64"},
		{"buffers for the largest", "rate: 1\nproducers: 64\nbatch: 100\nmessage_size: {dist: uniform, min: 100, max: 1000000}\n", "batch: producers x in_flight x batch x message_size is 48828 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(c.yaml), testChecks)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestMatrixSweepsSizes(t *testing.T) {
	s, err := Parse("m.yaml", []byte("rate: 1\nmessage_size: {dist: lognormal, median: 256, sigma: 1}\nmatrix:\n  message_size.sigma: [0.5, 2]\n  payload.content: [random, compressible]\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := s.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 || cells[3].Scenario.MessageSize.Sigma != 2 || cells[3].Scenario.Payload.Ratio != 4 || cells[0].Scenario.MessageSize.Median != 256 {
		t.Fatalf("cells %+v", cells[3].Scenario.MessageSize)
	}
	// A whole size swept: numbers and distributions alike.
	s, err = Parse("m.yaml", []byte("rate: 1\nmatrix:\n  message_size: [64, {dist: uniform, min: 64, max: 128}]\n"), testChecks)
	if err != nil {
		t.Fatal(err)
	}
	if cells, err = s.Cells(); err != nil || cells[1].Scenario.MessageSize.Largest() != 128 || cells[0].Scenario.MessageSize.Value != 64 {
		t.Fatalf("%v %+v", err, cells)
	}
	if cells[0].Name != "message_size=64" || cells[1].Name != "message_size={dist: uniform, min: 64, max: 128}" {
		t.Fatalf("cell names %q, %q", cells[0].Name, cells[1].Name)
	}
}
