package engine

import "testing"

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
