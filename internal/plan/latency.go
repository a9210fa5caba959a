package plan

import (
	"fmt"
	"slices"
	"strconv"

	"linerate.dev/linerate/api/v1alpha1"
)

// The sparse probe (load 0 % of the NDR) is a load that leaves the DUT idle between frames, so its latency
// is the DUT's own path without a queue: 1 % of the NDR, raised to give a trial the 500 timestamped frames
// RFC 8219 asks for where that is still at most a tenth of the NDR, and at most probeMaxFPS.
const (
	probePercentOfNDR    = 1.0
	probeMaxPercentOfNDR = 10.0
	probeMaxFPS          = 1000.0
	rfc8219Frames        = 500.0
)

// csitLatencyLoads is latency against load as FD.io CSIT draws it: the sparse probe, 10, 50 and 90 %, and
// the throughput itself.
var csitLatencyLoads = []float64{0, 10, 50, 90, 100}

// latencyLoads resolves spec.latency.percentOfNDR: the loads in the order given (the API server refuses
// a repeated one; so does this, for specs that never met it). Unset is RFC 2544's single point, the NDR,
// and under the CSIT goal preset CSIT's curve: who asks for CSIT's search expects its latency report.
func latencyLoads(in []v1alpha1.Percent, preset v1alpha1.GoalPreset) ([]float64, error) {
	if len(in) == 0 && preset == v1alpha1.GoalCSIT {
		return slices.Clone(csitLatencyLoads), nil
	}
	if len(in) == 0 {
		return []float64{100}, nil
	}
	out := make([]float64, 0, len(in))
	for i, v := range in {
		f, err := Percent(fmt.Sprintf("spec.latency.percentOfNDR[%d]", i), v, 0)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, f) {
			return nil, fmt.Errorf("spec.latency.percentOfNDR[%d]: %s%% is given twice", i, v)
		}
		out = append(out, f)
	}
	return out, nil
}

// LatencyLoadPercent is the load, in percent of line rate, of latency trials of trialS seconds at load
// percent of an NDR of ndrPercent (percent of line rate) whose line rate is lineFPS frames/s: the sparse
// probe for 0.
func LatencyLoadPercent(ndrPercent, load, lineFPS, trialS float64) float64 {
	if load > 0 {
		return ndrPercent * load / 100
	}
	rate := ndrPercent * probePercentOfNDR / 100
	if lineFPS <= 0 {
		return rate
	}
	toPercent := 100 / lineFPS
	if trialS > 0 {
		rate = max(rate, min(rfc8219Frames/trialS*toPercent, ndrPercent*probeMaxPercentOfNDR/100))
	}
	return min(rate, probeMaxFPS*toPercent)
}

// LoadPercent writes a latency load (percent of the NDR) as latency rows carry it.
func LoadPercent(load float64) string {
	return strconv.FormatFloat(load, 'f', -1, 64)
}

// RowLoad is the load a latency row measured, as LoadPercent writes it: rows written before loads could
// be chosen are at the NDR.
func RowLoad(l v1alpha1.LatencyResult) string {
	if l.PercentOfNDR == "" {
		return "100"
	}
	f, err := strconv.ParseFloat(string(l.PercentOfNDR), 64)
	if err != nil {
		return string(l.PercentOfNDR)
	}
	return LoadPercent(f)
}

// LoadPhrase names a latency load as LoadPercent writes it, for notes and tables: "at the NDR", "at the
// sparse probe", "at 50% of the NDR".
func LoadPhrase(load string) string {
	switch load {
	case "100":
		return "at the NDR"
	case "0":
		return "at the sparse probe"
	}
	return "at " + load + "% of the NDR"
}
