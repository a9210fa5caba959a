package engine

import (
	"context"
	"strings"
	"testing"
)

// Each engine of a pair numbers its one port 0; the merged result must number them as the pair does (the
// runner names a full port by its id), its workers' ports and queues too.
func TestMergedPortsAreThePairsPorts(t *testing.T) {
	local := &TrialResult{State: StateDone, Streams: []StreamResult{{ID: 0, TxFrames: 100}, {ID: 1, RxFrames: 90}},
		Ports: []PortCounters{{ID: 0, TxFull: 0}}, Workers: []WorkerHealth{{Lcore: 1, Ports: []int{0}, Queues: []WorkerQueue{{Port: 0, TxFrames: 100}}}}}
	remote := &TrialResult{State: StateDone, Streams: []StreamResult{{ID: 0, RxFrames: 100}, {ID: 1, TxFrames: 90}},
		Ports: []PortCounters{{ID: 0, TxFull: 7}}, Workers: []WorkerHealth{{Lcore: 1, Ports: []int{0}, Queues: []WorkerQueue{{Port: 0, RxFrames: 100}}}}}
	m := mergeHalves([]int{0, 1}, local, remote)
	if len(m.Ports) != 2 || m.Ports[0].ID != 0 || m.Ports[0].TxFull != 0 || m.Ports[1].ID != 1 || m.Ports[1].TxFull != 7 {
		t.Errorf("ports %+v: want the local engine's as port 0 and the remote engine's as port 1", m.Ports)
	}
	if w := m.Workers; len(w) != 2 || w[0].Ports[0] != 0 || w[0].Queues[0].Port != 0 || w[1].Ports[0] != 1 || w[1].Queues[0].Port != 1 {
		t.Errorf("workers %+v: want the remote engine's worker on port 1", w)
	}
	if remote.Workers[0].Ports[0] != 0 || remote.Workers[0].Queues[0].Port != 0 {
		t.Errorf("the remote engine's own result was changed: %+v", remote.Workers)
	}
	if s := m.Stream(1); s == nil || s.TxFrames != 90 || s.RxFrames != 90 {
		t.Errorf("stream 1 %+v: want its TX half from the remote engine and its RX half from the local one", s)
	}
}

// streamRecorder is an engine half that answers STREAM as an engine whose TX port has lanes queue pairs
// would, and keeps what it was asked; a receive-only stream keeps state for the lanes= given (or keep, when
// set: an engine that ignores lanes=).
type streamRecorder struct {
	Engine
	lanes, keep int
	got         []StreamConfig
}

func (r *streamRecorder) Stream(_ context.Context, cfg StreamConfig) (*StreamInfo, error) {
	r.got = append(r.got, cfg)
	lanes := r.lanes
	if cfg.TX < 0 {
		lanes = max(1, cfg.Lanes)
		if r.keep > 0 {
			lanes = r.keep
		}
	}
	return &StreamInfo{ID: cfg.ID, Lanes: lanes}, nil
}

// A split stream's receiving half is told the lanes its sending half sends on, whichever side sends; a
// pair whose halves disagree (or whose sender does not say) is refused, since the receiver would count the
// frames of lanes it has no state for as numbers it cannot carry and their loss would be the DUT's.
func TestPairTellsTheReceiverTheSendersLanes(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name                    string
		localLanes, remoteLanes int
		remoteKeeps             int
		tx, rx                  int
		wantRxLanes             int
		wantErr                 string
	}{
		{"local sends on 2 queues", 2, 4, 0, 0, 1, 2, ""},
		{"remote sends on 4 queues", 2, 4, 0, 1, 0, 4, ""},
		{"one queue", 1, 1, 0, 0, 1, 1, ""},
		{"a receiver that keeps one lane", 2, 1, 1, 0, 1, 2, "sent on 2 lanes and received with state for 1"},
		{"a receiver that keeps more lanes (a stream redefined)", 2, 1, 4, 0, 1, 2, ""},
		{"a sender that does not say", 0, 1, 0, 0, 1, 0, "did not say how many lanes"},
	} {
		local := &streamRecorder{lanes: c.localLanes}
		remote := &streamRecorder{lanes: c.remoteLanes, keep: c.remoteKeeps}
		p := &Pair{Local: local, Remote: remote}
		_, err := p.Stream(ctx, StreamConfig{ID: 3, TX: c.tx, RX: c.rx, Sizes: []int{64}})
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sender, receiver := local, remote
		if c.tx == 1 {
			sender, receiver = remote, local
		}
		if len(sender.got) != 1 || sender.got[0].TX != 0 || sender.got[0].RX != -1 || sender.got[0].Lanes != 0 {
			t.Errorf("%s: the sending half was asked %+v, want tx=0 rx=none and no lanes=", c.name, sender.got)
		}
		if len(receiver.got) != 1 || receiver.got[0].TX != -1 || receiver.got[0].RX != 0 || receiver.got[0].Lanes != c.wantRxLanes {
			t.Errorf("%s: the receiving half was asked %+v, want tx=none rx=0 lanes=%d", c.name, receiver.got, c.wantRxLanes)
		}
	}
}
