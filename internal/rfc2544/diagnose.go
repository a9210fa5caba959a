package rfc2544

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/units"
)

// Diagnosis bounds.
const (
	BoundFrames   = "FramesPerSecond"
	BoundBits     = "BitsPerSecond"
	BoundLineRate = "LineRate"
	BoundMixed    = "Mixed"
	// BoundDUTCPU: the DUT (spec.dut.cpu) used 90 % or more of the CPU it may use at the NDR of every size
	// read below line rate.
	BoundDUTCPU = "DUTCPU"
	// BoundUnknown: the frame-size sweep cannot tell; what the DUT's CPU did is what the diagnosis says.
	BoundUnknown = "Unknown"
)

// Diagnose fits the time the DUT needs per frame, t = a + b·(size+20), to the NDRs of the frame-size
// sweep (least squares; L1 bytes so that line rate itself is a pure per-byte cost). A DUT whose a
// dominates even at the largest frame is limited in frames/s (per-packet work: interrupts, lookups,
// dispatch); one whose b dominates even at the smallest is limited in bit/s (per-byte work: crypto,
// copies, the bus). It needs at least three sizes below line rate.
func Diagnose(res *v1alpha1.Results, p *plan.Plan) *v1alpha1.Diagnosis {
	if res == nil || len(p.Ports) < 2 {
		return nil
	}
	dir := p.Directions()[0].Name
	d := fitCost(res, dir)
	cpu, saturated := dutCPUDiagnosis(res, dir)
	switch {
	case cpu == "":
	case d == nil && saturated:
		d = &v1alpha1.Diagnosis{Direction: dir, Bound: BoundDUTCPU, Explanation: cpu, DUTCPU: cpu}
	case d == nil:
		d = &v1alpha1.Diagnosis{Direction: dir, Bound: BoundUnknown, Explanation: cpu, DUTCPU: cpu}
	case d != nil:
		d.DUTCPU = cpu
		if saturated {
			d.Bound = BoundDUTCPU
		}
	}
	return d
}

// fitCost is Diagnose's fit of the DUT's cost per frame and per byte in one direction, nil when the sweep
// cannot tell.
func fitCost(res *v1alpha1.Results, dir string) *v1alpha1.Diagnosis {
	var xs, ys []float64
	atLine := 0
	total := 0
	for _, t := range res.Throughput {
		if t.Direction != dir || t.NDR.FramesPerSecond <= 0 || t.TesterLimited {
			continue
		}
		total++
		if pct, _ := strconv.ParseFloat(t.NDR.PercentOfLineRate, 64); pct >= 99 {
			atLine++
		}
		xs = append(xs, float64(t.FrameSize)+20)
		ys = append(ys, 1e9/float64(t.NDR.FramesPerSecond))
	}
	if total == 0 {
		return nil
	}
	if atLine == total {
		return &v1alpha1.Diagnosis{Direction: dir, Bound: BoundLineRate,
			Explanation: "the DUT forwarded at line rate at every frame size: it is not the bottleneck of this path"}
	}
	if len(xs) < 3 {
		return nil
	}
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return nil
	}
	b := (n*sxy - sx*sy) / den
	a := (sy - b*sx) / n
	a, b = math.Max(a, 0), math.Max(b, 0)
	minL, maxL := xs[0], xs[0]
	for _, x := range xs {
		minL, maxL = math.Min(minL, x), math.Max(maxL, x)
	}
	d := &v1alpha1.Diagnosis{Direction: dir, PerFrameNs: strconv.FormatFloat(a, 'f', 1, 64),
		PerByteNs: strconv.FormatFloat(b, 'f', 4, 64)}
	switch {
	case a >= b*maxL:
		d.Bound = BoundFrames
		d.Explanation = fmt.Sprintf("per-frame cost (%.0f ns) outweighs per-byte cost even at %.0f B: the DUT is limited in frames/s (about %.0f frames/s whatever the size)",
			a, maxL-20, 1e9/(a+b*minL))
	case b*minL >= a:
		d.Bound = BoundBits
		d.Explanation = fmt.Sprintf("per-byte cost (%.3f ns/B, about %s L1) outweighs per-frame cost even at %.0f B: the DUT is limited in bit/s",
			b, units.FormatBits(int64(math.Round(8e9/b))), minL-20)
	default:
		cross := a/b - 20
		d.Bound = BoundMixed
		d.Explanation = fmt.Sprintf("frames/s-bound below about %.0f B (%.0f ns per frame), bit/s-bound above it (%.3f ns per byte)", cross, a, b)
	}
	return d
}

// dutCPUDiagnosis says from the DUT's CPU cost at each NDR of a direction (spec.dut.cpu) whether it used all
// the CPU it may use, and whether it did at every size ("" when no row can tell). Rows that are no NDR of the
// DUT's (the tester's limit, undetermined) or at line rate (the line's limit) say nothing of it. It claims
// no cause beyond what was read: a DUT that polls is busy at any load, and one throttled within its CFS
// periods, or single-threaded under a larger allowance, may lose frames below 90 % of it.
func dutCPUDiagnosis(res *v1alpha1.Results, dir string) (string, bool) {
	var sat, not, unknown []string
	most := ""
	idle, n, atLine := 0, 0, 0
	for _, t := range res.Throughput {
		c := t.DUTCPU
		if t.Direction != dir || c == nil || t.TesterLimited || t.Undetermined != "" || t.NDR.FramesPerSecond <= 0 {
			continue
		}
		if pct, _ := strconv.ParseFloat(t.NDR.PercentOfLineRate, 64); pct >= 99 {
			atLine++
			continue
		}
		n++
		if busy, err := strconv.ParseFloat(c.CoresBusy, 64); err == nil && busy == 0 {
			idle++
		}
		size := fmt.Sprintf("%d B", t.FrameSize)
		switch {
		case c.CoresAllowed == "":
			unknown = append(unknown, size+" ("+c.CoresBusy+" cores busy)")
		case c.Saturated:
			sat = append(sat, size)
			most = fmt.Sprintf("%s of the %s cores it may use at %s", c.CoresBusy, c.CoresAllowed, size)
		default:
			not = append(not, size+" ("+c.CoresBusy+" of "+c.CoresAllowed+" cores)")
		}
	}
	below := "every size"
	if atLine > 0 {
		below = "every size below line rate"
	}
	var says []string
	switch {
	case n == 0:
		return "", false
	case idle == n:
		return "the DUT's cgroup used no CPU at any NDR: the DUT's work is not in it (the kernel's forwarding, or processes outside it)", false
	case len(sat) > 0 && len(not) == 0 && len(unknown) == 0:
		return fmt.Sprintf("the DUT used 90 %% or more of the CPU it may use at the NDR of %s (%s; %s): its CPU was at its limit", below, strings.Join(sat, ", "), most), true
	case len(sat) > 0:
		says = append(says, fmt.Sprintf("the DUT used 90 %% or more of the CPU it may use at the NDR of %s (%s)", strings.Join(sat, ", "), most))
	}
	if len(not) > 0 {
		says = append(says, fmt.Sprintf("the DUT used less than 90 %% of the CPU it may use at the NDR of %s: its CPU allowance was not used up there (a single-threaded DUT, or one throttled within its CFS periods, can still be bound by its CPU)", strings.Join(not, ", ")))
	}
	if len(unknown) > 0 {
		says = append(says, fmt.Sprintf("at the NDR of %s no CPU quota of its cgroup (nor spec.dut.cpu.cores) says how many cores the DUT may use: whether its CPU was at its limit there is not known", strings.Join(unknown, ", ")))
	}
	return strings.Join(says, "; "), false
}
