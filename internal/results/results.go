// Package results is the contract for what the tester reports and the operator reads: the results
// ConfigMap "<test>-results", created empty by the operator (owned by the TrafficTest, so it outlives the
// tester pods) and updated by the runner after every trial through a ServiceAccount whose Role may touch
// only that ConfigMap (resourceNames). Nothing measured lives only in a pod.
//
// Keys:
//   - results.json        v1alpha1.Results: the result tables so far (complete steps only).
//   - progress.json       v1alpha1.Progress: where the runner is; refreshed at least every 5 s.
//   - state.json          State: running / done / failed, with a reason.
//   - trials.jsonl.gz     (binaryData) the trial records, one JSON object per line, gzip-compressed; past
//     SealBytes they move into sealed segments (segments.go): a long run outgrows a ConfigMap's 1 MiB.
//   - trial-segments.json the sealed segments, oldest first.
//   - checkpoint.json     where the run stood after its last complete step, to resume from (checkpoint.go).
package results

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

// Keys of the results ConfigMap.
const (
	KeyResults  = "results.json"
	KeyProgress = "progress.json"
	KeyState    = "state.json"
	KeyTrials   = "trials.jsonl.gz"
)

// ConfigMapName is the results ConfigMap of a TrafficTest.
func ConfigMapName(test string) string { return test + resultsSuffix }

const resultsSuffix = "-results"

// PreviousRunConfigMapName keeps the result tables of a TrafficTest's earlier run (generation gen of its
// spec) when a spec change starts a new one.
func PreviousRunConfigMapName(test string, gen int64) string {
	return fmt.Sprintf("%s-results-gen%d", test, gen)
}

// PlanConfigMapName is the plan ConfigMap of a TrafficTest.
func PlanConfigMapName(test string) string { return test + "-plan" }

// RunState is the runner's own view of how the run ends.
type RunState string

const (
	StateRunning   RunState = "Running"
	StateSucceeded RunState = "Succeeded"
	StateFailed    RunState = "Failed"
)

// State is the runner's verdict on the run itself (not on the DUT).
type State struct {
	State RunState `json:"state"`
	// Reason is a CamelCase cause, e.g. DUTStalled or EngineFailed.
	Reason  string    `json:"reason,omitempty"`
	Message string    `json:"message,omitempty"`
	Time    time.Time `json:"time"`
}

// Worker is one tester worker lcore in a trial.
type Worker struct {
	Lcore  int     `json:"lcore"`
	Queues []Queue `json:"queues"`
	// MaxGapUs is the longest pause of the worker's loop while the trial measured or drained.
	MaxGapUs int64 `json:"maxGapUs,omitempty"`
}

// Queue is a queue pair of a port a worker served, and the frames it received and sent in the trial.
type Queue struct {
	Port  int   `json:"port"`
	Queue int   `json:"queue"`
	Rx    int64 `json:"rx"`
	Tx    int64 `json:"tx"`
}

// DUTCPU is the DUT's CPU time over one trial (its cgroup's, read every 10 ms through it): Seconds all of it,
// warm-up and drain included, CoresBusy while the frames came; the costs per kilobyte and frame are Seconds
// over the frames the DUT forwarded in every direction of the trial.
type DUTCPU struct {
	Seconds      float64 `json:"cpuS"`
	CoresBusy    float64 `json:"coresBusy"`
	CoresAllowed float64 `json:"coresAllowed,omitempty"`
	// USPerKbyte and USPerKframe are the CPU µs per 1000 bytes and per 1000 frames forwarded (absent when
	// no frame was).
	USPerKbyte  float64 `json:"usPerKbyte,omitempty"`
	USPerKframe float64 `json:"usPerKframe,omitempty"`
}

// Saturated says the DUT used 90 % or more of what it may use (its quota, or spec.dut.cpu.cores).
func (c *DUTCPU) Saturated() bool {
	return c != nil && c.CoresAllowed > 0 && c.CoresBusy >= 0.9*c.CoresAllowed
}

// Trial is the record of one trial: what was offered and what came back.
type Trial struct {
	Seq       int               `json:"seq"`
	Time      time.Time         `json:"time"`
	Test      v1alpha1.TestKind `json:"test"`
	FrameSize int               `json:"frameSize"` // 0 for IMIX
	Direction string            `json:"direction"`
	// Purpose within the test: search, validation, latency, step, burst.
	Purpose    string  `json:"purpose"`
	Repetition int     `json:"repetition,omitempty"`
	DurationS  float64 `json:"durationS"`
	// OfferedPercent is the target rate in percent of line rate (L1); Burst the frames of a burst trial.
	OfferedPercent float64 `json:"offeredPercent,omitempty"`
	Burst          int64   `json:"burst,omitempty"`
	TargetFPS      float64 `json:"targetFps"`
	AchievedFPS    float64 `json:"achievedFps"`
	TxFrames       int64   `json:"tx"`
	RxFrames       int64   `json:"rx"`
	Lost           int64   `json:"lost"`
	Duplicates     int64   `json:"dup,omitempty"`
	Reordered      int64   `json:"reord,omitempty"`
	// Early frames arrived with a gap before them; MaxLate and MaxEarly are the longest distances (in
	// sequence numbers) a frame arrived behind or ahead of its place. Reordering is counted within each RX
	// queue (the order between queues is not observable); Early, MaxEarly and MaxLate are left out when
	// the stream arrived on several queues (RxQueues), whose gaps include the other queues' flows and
	// whose distances are in one sender lane's numbers.
	Early    int64 `json:"early,omitempty"`
	MaxLate  int64 `json:"maxLate,omitempty"`
	MaxEarly int64 `json:"maxEarly,omitempty"`
	// RxQueues is how many RX queues the stream's frames arrived on, when more than one.
	RxQueues int `json:"rxQueues,omitempty"`
	// Workers are the tester's worker lcores in the trial: the queue pairs each served, with the frames
	// each carried, and its longest pause (the engine's workers record, both engines' in a split test).
	Workers []Worker `json:"workers,omitempty"`
	// Corrupted frames arrived with a bad IPv4 header or UDP checksum and were not counted as received
	// (each is in Lost unless an intact copy of it arrived too).
	Corrupted int64 `json:"corrupt,omitempty"`
	// Stale frames of earlier trials arrived on this direction's receiving port during this trial: the
	// DUT was still forwarding an earlier load when it began, and this trial's frames waited behind them.
	Stale int64 `json:"stale,omitempty"`
	// TooBig counts the ICMP errors that came back saying a hop refused this direction's frames as too big
	// for its MTU (IPv4 "fragmentation needed", ICMPv6 "packet too big": the frames carry DF); PathMTU is
	// the smallest MTU they named. Such frames are dropped, not forwarded: they are in Lost.
	TooBig  int64 `json:"tooBig,omitempty"`
	PathMTU int64 `json:"pathMtu,omitempty"`
	// Fragmented counts the frames that arrived in fragments (sent with DF clear: spec.traffic.dontFragment
	// false), FragmentedWhole those of them every fragment of which arrived (the others are lost), and
	// Fragments the fragments of them that arrived.
	Fragmented      int64 `json:"fragmented,omitempty"`
	FragmentedWhole int64 `json:"fragmentedWhole,omitempty"`
	Fragments       int64 `json:"fragments,omitempty"`
	// FragmentsUnmatched are fragments that came to the receiving port whose first fragment never did.
	FragmentsUnmatched int64 `json:"fragmentsUnmatched,omitempty"`
	// RestExtendedS is how much longer than dutRest the DUT rested before this trial: the trial waited
	// until nothing had arrived from it for dutRest (it was still forwarding an earlier trial).
	RestExtendedS float64 `json:"restExtendedS,omitempty"`
	// DUTCPU is what the DUT's CPU paid for the trial (spec.dut.cpu), the same in every direction's record
	// of it.
	DUTCPU      *DUTCPU `json:"dutCPU,omitempty"`
	LossPercent float64 `json:"lossPercent"`
	// Pass says the trial met the loss tolerance.
	Pass bool `json:"pass"`
	// OverLatency says its latency exceeded spec.throughput.maxLatency: it failed whatever its loss.
	OverLatency bool `json:"overLatency,omitempty"`
	// TesterLimited marks a trial the tester spoiled: it could not offer the rate, or TesterFaults is not
	// empty. Such a trial is invalid, neither a pass nor a fail of the DUT, and is excluded from the search.
	TesterLimited bool `json:"testerLimited,omitempty"`
	// TesterFaults say what the tester did wrong in the trial, one sentence each (frames its own receive
	// path dropped, frames it could not send, bursts after it fell behind its schedule).
	TesterFaults []string `json:"testerFaults,omitempty"`
	// Aborted gives the reason a trial was cut short (dut-stalled, aborted).
	Aborted string                   `json:"aborted,omitempty"`
	Latency *v1alpha1.LatencySummary `json:"latency,omitempty"`
	// Timeline is a timeline trial's record: its outages and the bins that lost frames or were the
	// tester's (every other bin received all it was sent).
	Timeline *Timeline `json:"timeline,omitempty"`
}

// Timeline is what a timeline trial found in one direction (the engine's TIMELINE, PROTOCOL.md).
type Timeline struct {
	// StartNs is when the measurement started (UTC, ns since the epoch); bin i starts at StartNs + i × BinMs.
	StartNs int64   `json:"startNs"`
	BinMs   int64   `json:"binMs"`
	RateFPS float64 `json:"rateFps"`
	// Bins is how many bins there were; Marked are those that lost frames or were the tester's:
	// [index, sent, received, flags] (flags as the engine's: 1 lag, 2 pause, 4 rx-drop, 8 window, 16 unsent).
	Bins   int64      `json:"bins"`
	Marked [][4]int64 `json:"marked,omitempty"`
	// Outages are every run of consecutive losses of at least the plan's outageMinFrames (the first
	// MaxRecordedOutages), Tester those in the tester's bins.
	Outages []Outage `json:"outages,omitempty"`
	// OutagesLeftOut counts the outages beyond MaxRecordedOutages (counted in the result, not listed).
	OutagesLeftOut int64 `json:"outagesLeftOut,omitempty"`
	// MissedBins were bins the runner could not read before the engine dropped them: the tester's.
	MissedBins int64 `json:"missedBins,omitempty"`
	// MarkedLeftOut counts the marked bins beyond MaxMarkedBins (in the result's counts, not listed).
	MarkedLeftOut int64 `json:"markedLeftOut,omitempty"`
}

// MaxMarkedBins bounds a trial record's marked bins, so that the record fits a ConfigMap segment.
const MaxMarkedBins = 20000

// MaxRecordedOutages bounds a trial record's outage list.
const MaxRecordedOutages = 5000

// Outage is one run of consecutive lost frames.
type Outage struct {
	First   int64 `json:"first"`
	Frames  int64 `json:"frames"`
	StartNs int64 `json:"startNs"`
	Open    bool  `json:"open,omitempty"`
	Tester  bool  `json:"tester,omitempty"`
}

// EncodeTrials packs trial records for KeyTrials.
func EncodeTrials(trials []Trial) ([]byte, error) {
	lines := make([][]byte, len(trials))
	for i := range trials {
		l, err := json.Marshal(&trials[i])
		if err != nil {
			return nil, err
		}
		lines[i] = l
	}
	return EncodeTrialLines(lines)
}

// DecodeTrials unpacks KeyTrials.
func DecodeTrials(data []byte) ([]Trial, error) {
	lines, err := DecodeTrialLines(data)
	if err != nil {
		return nil, err
	}
	var out []Trial
	for i, l := range lines {
		var t Trial
		if err := json.Unmarshal(l, &t); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", KeyTrials, i+1, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// DecodeTrialLines unpacks KeyTrials into its JSON lines, as written: a runner that continues a run
// extends the records without re-encoding what is already there.
func DecodeTrialLines(data []byte) ([][]byte, error) {
	if len(data) == 0 {
		return nil, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyTrials, err)
	}
	defer func() { _ = zr.Close() }() // a reader: the data's errors come from reading it
	var out [][]byte
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		return nil, err
	}
	return out, nil
}

// EncodeTrialLines packs JSON lines (each one record, without its newline) for KeyTrials.
func EncodeTrialLines(lines [][]byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	for _, l := range lines {
		if _, err := zw.Write(l); err != nil {
			return nil, err
		}
		if _, err := zw.Write([]byte{'\n'}); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
