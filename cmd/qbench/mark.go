package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"qbench/bench"
)

// External fault marks (bench/marks.go): a running `qbench run --marks-listen ADDR` takes
// POST /marks; `qbench mark` is its client. Live marks rather than a file read after the run,
// because a mark applied while the run is under way is costed by the runner's own code: a send
// that fails during it is charged when it fails, the first write and read after its end are seen
// as they happen. A file of wall-clock times read afterwards could give neither without keeping
// every send's outcome, and would need the tool's clock to agree with qbench's.

// marksPath is where a marks listener takes marks.
const marksPath = "/marks"

// marksHandler takes POST /marks {kind, target, action} for the run under way on board: 200 and
// the receipt; 400 for a malformed mark; 409 for one the run's state refuses (no run under way,
// an end with no start, a start of a fault already open); errors as {"error": text}.
func marksHandler(board *bench.MarkBoard) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(marksPath, func(w http.ResponseWriter, req *http.Request) {
		reply := func(code int, v any) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_ = json.NewEncoder(w).Encode(v)
		}
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			reply(http.StatusMethodNotAllowed, map[string]string{"error": "POST a mark: {\"kind\", \"target\", \"action\": \"start\" or \"end\"}"})
			return
		}
		var m bench.Mark
		dec := json.NewDecoder(io.LimitReader(req.Body, 4096))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			reply(http.StatusBadRequest, map[string]string{"error": "reading the mark: " + err.Error()})
			return
		}
		rc, err := board.Record(m)
		switch {
		case errors.Is(err, bench.ErrMarkConflict):
			reply(http.StatusConflict, map[string]string{"error": err.Error()})
		case err != nil:
			reply(http.StatusBadRequest, map[string]string{"error": err.Error()})
		default:
			reply(http.StatusOK, rc)
		}
	})
	return mux
}

// listenMarks starts the marks listener of --marks-listen (none when addr is empty) and says on
// stderr where it listens: with port 0, the port the system chose.
func listenMarks(addr string) (*bench.MarkBoard, func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	if !strings.Contains(addr, ":") {
		return nil, nil, usageError{fmt.Errorf("--marks-listen %q: want HOST:PORT (127.0.0.1:0 for any free port on loopback)", addr)}
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr // loopback unless a host is named: marks are not for anyone who can reach the port
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("--marks-listen %s: %w", addr, err)}
	}
	board := bench.NewMarkBoard()
	srv := &http.Server{Handler: marksHandler(board), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "qbench: taking fault marks at http://%s%s (qbench mark --to %s)\n", ln.Addr(), marksPath, ln.Addr())
	return board, func() { _ = srv.Close() }, nil
}

// markURL is the marks endpoint of --to: HOST:PORT or a URL, with /marks added when it has no path.
func markURL(to string) string {
	if !strings.Contains(to, "://") {
		to = "http://" + to
	}
	if i := strings.Index(to[strings.Index(to, "://")+3:], "/"); i < 0 {
		to += marksPath
	}
	return to
}

func markCmd() *cobra.Command {
	var to, kind, target string
	cmd := &cobra.Command{
		Use:   "mark start|end --to HOST:PORT --kind KIND --target TARGET",
		Short: "Mark the start or end of a fault something else injected, in a running qbench run",
		Long: `mark tells a running "qbench run --marks-listen HOST:PORT" that a fault qbench did not
inject (a chaos experiment, an operator's action) started or ended. The run opens a fault window
at the start and closes it at the end, on its own clock, and costs it as it costs its own faults:
lost messages, duplicates, failed sends, the time until writes and reads came back, the lag peak.
The result's fault row says marked: true; the summary, the report and the faults CSV say
"(marked)".

KIND is one of: ` + bench.MarkKindList() + `.
TARGET names what the fault hit (a node, a pod, a broker). A start and its end name the same
kind and target.

Exit codes: 0 recorded; 1 the run refused it (no run's load under way, an end with no start, a
start of a fault already open) or could not be reached; 2 bad usage or a malformed mark.`,
		Example: `  qbench run scenario.yaml --marks-listen 127.0.0.1:7070 -o result.json &
  qbench mark start --to 127.0.0.1:7070 --kind network-partition --target redis-2
  kubectl apply -f partition.yaml; sleep 30; kubectl delete -f partition.yaml
  qbench mark end --to 127.0.0.1:7070 --kind network-partition --target redis-2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return usageError{errors.New("--to HOST:PORT is required: the address of a qbench run started with --marks-listen")}
			}
			m := bench.Mark{Kind: kind, Target: target, Action: args[0]}
			if err := m.Validate(); err != nil {
				return usageError{fmt.Errorf("mark: %w", err)}
			}
			rc, err := postMark(cmd, markURL(to), m)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "marked %s of %s on %s in run %s at %.3fs (fault %d)\n", m.Action, m.Kind, m.Target, rc.RunID, float64(rc.AtNs)/1e9, rc.Window)
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the marks address of a running qbench run (its --marks-listen HOST:PORT, or a URL)")
	cmd.Flags().StringVar(&kind, "kind", "", "what the fault was (see the list above)")
	cmd.Flags().StringVar(&target, "target", "", "what the fault hit: a node, a pod, a broker")
	return cmd
}

// postMark sends m and reads the receipt; a refusal is the run's error text.
func postMark(cmd *cobra.Command, url string, m bench.Mark) (bench.MarkReceipt, error) {
	body, _ := json.Marshal(m)
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return bench.MarkReceipt{}, usageError{fmt.Errorf("--to %s: %w", url, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return bench.MarkReceipt{}, fmt.Errorf("mark: no qbench run takes marks at %s: %w", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		msg := strings.TrimSpace(string(raw))
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		err := fmt.Errorf("mark refused by %s (%s): %s", url, resp.Status, msg)
		if resp.StatusCode == http.StatusBadRequest {
			return bench.MarkReceipt{}, usageError{err}
		}
		return bench.MarkReceipt{}, err
	}
	var rc bench.MarkReceipt
	if err := json.Unmarshal(raw, &rc); err != nil {
		return rc, fmt.Errorf("mark: %s answered %q, not a receipt: %w", url, raw, err)
	}
	return rc, nil
}
