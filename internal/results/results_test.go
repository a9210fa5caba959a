package results

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
)

func TestTrialsRoundTripAndStayCompact(t *testing.T) {
	var trials []Trial
	start := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	for i := 0; i < 3000; i++ {
		trials = append(trials, Trial{
			Seq: i, Time: start.Add(time.Duration(i) * time.Second), Test: v1alpha1.TestThroughput,
			FrameSize: 64, Direction: "west-east", Purpose: "search", DurationS: 1,
			OfferedPercent: 50, TargetFPS: 7440476, AchievedFPS: 7440470,
			TxFrames: 7440470, RxFrames: 7440470 - int64(i%7), Lost: int64(i % 7),
			LossPercent: float64(i%7) / 7440470 * 100, Pass: i%7 == 0,
		})
	}
	trials[10].Latency = &v1alpha1.LatencySummary{Valid: true, MinNs: 4100, P99Ns: 9000}
	trials[11].Aborted = "dut-stalled"
	data, err := EncodeTrials(trials)
	if err != nil {
		t.Fatal(err)
	}
	// A full suite must fit a ConfigMap (1 MiB) with room to spare.
	if len(data) > 256<<10 {
		t.Errorf("3000 trials take %d bytes compressed; the ConfigMap limit is 1 MiB", len(data))
	}
	got, err := DecodeTrials(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(trials) {
		t.Fatalf("decoded %d trials, want %d", len(got), len(trials))
	}
	if got[10].Latency == nil || got[10].Latency.MinNs != 4100 || got[11].Aborted != "dut-stalled" ||
		got[2999].Lost != trials[2999].Lost || !got[2999].Time.Equal(trials[2999].Time) {
		t.Fatalf("round trip changed records: %+v %+v %+v", got[10], got[11], got[2999])
	}
}

func TestDecodeTrialsErrors(t *testing.T) {
	if got, err := DecodeTrials(nil); err != nil || got != nil {
		t.Fatalf("empty data is no trials: %v %v", got, err)
	}
	if _, err := DecodeTrials([]byte("not gzip")); err == nil {
		t.Fatal("garbage must be an error")
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = io.WriteString(zw, "{\"seq\":1}\n{broken\n")
	_ = zw.Close()
	if _, err := DecodeTrials(buf.Bytes()); err == nil {
		t.Fatal("a broken line must be an error naming the line")
	} else if want := "line 2"; !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Fatalf("error %q does not name %q", err, want)
	}
}

func TestNames(t *testing.T) {
	if ConfigMapName("ipsec") != "ipsec-results" || PlanConfigMapName("ipsec") != "ipsec-plan" {
		t.Fatal("ConfigMap names are part of the contract with the runner's Role")
	}
}
