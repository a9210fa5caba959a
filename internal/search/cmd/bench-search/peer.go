package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"time"

	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/engine/sim"
)

// The peer is FD.io CSIT's MLRsearch (PyPI mlrsearch 1.2.1, unmodified), run by hack/bench/mlrsearch_peer.py
// as a co-process: it asks for every trial over its stdout, and bench-search runs the trial on a simulated
// DUT of the same model and seed as linerate's search of the pair, so the pair differs in the search alone.
// The lines are JSON; the protocol is written out in the driver.

// peerGoal is one of MLRsearch's SearchGoal, in its own field names.
type peerGoal struct {
	LossRatio            float64 `json:"loss_ratio"`
	ExceedRatio          float64 `json:"exceed_ratio"`
	RelativeWidth        float64 `json:"relative_width"`
	InitialTrialDuration float64 `json:"initial_trial_duration"`
	FinalTrialDuration   float64 `json:"final_trial_duration"`
	DurationSum          float64 `json:"duration_sum"`
	FailFast             bool    `json:"fail_fast"`
}

// peerSpec is one search of the peer: its Config's loads (frames/s), warm-up (0: none) and goals.
type peerSpec struct {
	MinLoad float64    `json:"min_load"`
	MaxLoad float64    `json:"max_load"`
	Warmup  float64    `json:"warmup"`
	Goals   []peerGoal `json:"goals"`
}

// peerTrial is a trial the peer asks for: seconds and frames/s.
type peerTrial struct {
	Duration float64 `json:"duration"`
	Load     float64 `json:"load"`
}

// trialReply is the outcome of a trial in MLRsearch's MeasurementResult counts, and the seconds it lasted.
type trialReply struct {
	Offered   int64   `json:"offered"`
	Forwarded int64   `json:"forwarded"`
	Intended  int64   `json:"intended"`
	Duration  float64 `json:"duration"`
}

// peerBounds are a goal's relevant bounds and conditional throughput (frames/s; nil: none).
type peerBounds struct {
	Lower       *float64 `json:"lower"`
	Upper       *float64 `json:"upper"`
	Conditional *float64 `json:"conditional"`
}

// peerMessage is any line the peer writes.
type peerMessage struct {
	Ready   string       `json:"ready"`
	Trial   *peerTrial   `json:"trial"`
	Result  []peerBounds `json:"result"`
	Trials  int          `json:"trials"`
	Traffic float64      `json:"traffic"`
	Error   string       `json:"error"`
}

// peerResult is one search of the peer: per goal its bounds, and the trials and traffic time it took as
// bench-search ran them.
type peerResult struct {
	Goals     []peerBounds
	Trials    int
	TrialTime time.Duration
}

// trialServer runs the peer's trials on one simulated DUT exactly as sim's Measure runs linerate's:
// stream 0 of one frame size from port 0 to port 1, and the same trial.
type trialServer struct {
	e *sim.Engine
}

func newTrialServer(d sim.DUT, size int) *trialServer {
	e := sim.New(d)
	e.Measure(size) // defines the stream as linerate's search sees it
	return &trialServer{e: e}
}

// trial runs one trial of t.Duration seconds at t.Load frames/s.
func (s *trialServer) trial(ctx context.Context, t peerTrial) (trialReply, error) {
	if t.Duration <= 0 || t.Load <= 0 || math.IsNaN(t.Duration) || math.IsNaN(t.Load) {
		return trialReply{}, fmt.Errorf("peer asked for a trial of %g s at %g frames/s", t.Duration, t.Load)
	}
	d := time.Duration(math.Round(t.Duration * 1e9))
	r, err := s.e.RunTrial(ctx, engine.TrialConfig{Streams: []int{0}, RatesFPS: []float64{t.Load}, Duration: d, Stall: 2 * time.Second}, nil)
	if err != nil {
		return trialReply{}, err
	}
	st := r.Streams[0]
	return trialReply{Offered: st.TxFrames, Forwarded: st.TxFrames - st.Lost(), Intended: max(st.ScheduledFrames, st.TxFrames),
		Duration: float64(r.DurationNs) / 1e9}, nil
}

// peer is the running co-process.
type peer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// startPeer starts the driver (argv: the venv's python and the driver script) and waits for it to say
// which MLRsearch it runs.
func startPeer(argv []string) (*peer, string, error) {
	if len(argv) == 0 {
		return nil, "", errors.New("no MLRsearch peer command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("MLRsearch peer %q: %w (bash hack/install-mlrsearch.sh makes the venv)", argv, err)
	}
	p := &peer{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	p.out.Buffer(make([]byte, 64<<10), 16<<20)
	msg, err := p.read()
	if err != nil {
		_ = p.close()
		return nil, "", err
	}
	return p, msg.Ready, nil
}

func (p *peer) read() (peerMessage, error) {
	var msg peerMessage
	if !p.out.Scan() {
		if err := p.out.Err(); err != nil {
			return msg, fmt.Errorf("MLRsearch peer: %w", err)
		}
		return msg, errors.New("MLRsearch peer: it ended without an answer (its errors are above)")
	}
	if err := json.Unmarshal(p.out.Bytes(), &msg); err != nil {
		return msg, fmt.Errorf("MLRsearch peer wrote %q: %w", p.out.Text(), err)
	}
	if msg.Error != "" {
		return msg, fmt.Errorf("MLRsearch peer: %s", msg.Error)
	}
	return msg, nil
}

func (p *peer) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = p.in.Write(append(b, '\n'))
	return err
}

// search runs one search of the peer, its trials on s.
func (p *peer) search(ctx context.Context, spec peerSpec, s *trialServer) (*peerResult, error) {
	if err := p.write(map[string]peerSpec{"search": spec}); err != nil {
		return nil, err
	}
	var res peerResult
	for {
		msg, err := p.read()
		if err != nil {
			return nil, err
		}
		if msg.Trial == nil {
			if len(msg.Result) != len(spec.Goals) {
				return nil, fmt.Errorf("MLRsearch peer answered %d goals of %d", len(msg.Result), len(spec.Goals))
			}
			// the peer's own count is a check on the pipe: every trial it asked for was run here
			if msg.Trials != res.Trials {
				return nil, fmt.Errorf("MLRsearch peer counted %d trials, bench-search ran %d", msg.Trials, res.Trials)
			}
			res.Goals = msg.Result
			return &res, nil
		}
		r, err := s.trial(ctx, *msg.Trial)
		if err != nil {
			return nil, err
		}
		res.Trials++
		res.TrialTime += time.Duration(math.Round(r.Duration * 1e9))
		if err := p.write(r); err != nil {
			return nil, err
		}
	}
}

// close ends the peer: end of input ends its loop.
func (p *peer) close() error {
	_ = p.in.Close()
	return p.cmd.Wait()
}
