package rfc2544

import (
	"context"
	"fmt"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

// pathMTU finds, in each direction on its own, the largest frame that crosses the DUT whole: a search over
// frame sizes at a low rate, where a size fits when frames of it arrived whole (not in fragments, with DF
// clear: spec.traffic.dontFragment false) and no ICMP error refused any. The
// DUT's ICMP "too big" errors name the MTU: the search tries that size and the next first, so a DUT that
// says its MTU costs a few probes and one that drops oversize frames silently a binary search. A size fits
// on any probe in which frames of it crossed (the tester's faults lose frames, they make none cross); it
// does not fit only on a probe the tester did not spoil, and a probe it spoiled on every try leaves the
// direction undetermined.
func (r *Runner) pathMTU(ctx context.Context) error {
	for d, dir := range r.plan.Directions() {
		row, err := r.findPathMTU(ctx, d)
		if err != nil {
			return err // no row: what a failed run did not finish is not a size
		}
		row.Direction = dir.Name
		r.res.PathMTU = append(r.res.PathMTU, row)
		r.note(pathMTUNote(row, r.plan.PathMTU.MaxFrame))
	}
	return nil
}

// pathMTUProbe is what one probe of a size found.
type pathMTUProbe struct {
	fits    bool
	crossed int64 // frames of it that arrived
	tooBig  int64 // ICMP errors refusing frames of the size
	// frames of it that arrived in fragments (DF clear)
	fragmented int64
	mtu        int64 // the smallest MTU they named (0: none)
	spoiled    string
}

func (r *Runner) findPathMTU(ctx context.Context, d int) (v1alpha1.PathMTUResult, error) {
	var row v1alpha1.PathMTUResult
	vlan := r.plan.Traffic.VLAN != 0
	overhead := plan.FrameOverhead(vlan)
	probed := map[int]pathMTUProbe{}
	probe := func(size int) (pathMTUProbe, error) {
		if p, ok := probed[size]; ok {
			return p, nil
		}
		p, err := r.probePathMTU(ctx, v1alpha1.TestPathMTU, d, size)
		row.Probes++
		if err != nil {
			return p, err
		}
		if p.mtu > 0 && (row.ICMPMTU == 0 || p.mtu < int64(row.ICMPMTU)) {
			row.ICMPMTU = int32(p.mtu)
		}
		probed[size] = p
		return p, nil
	}
	// lo: the largest size known to fit; hi: the smallest known not to
	lo, hi := plan.MinFrameSize(r.plan.Traffic.IPVersion, vlan), r.plan.PathMTU.MaxFrame
	for _, size := range []int{hi, lo} {
		p, err := probe(size)
		if err != nil {
			return row, err
		}
		switch {
		case p.spoiled != "":
			row.Undetermined = fmt.Sprintf("the tester spoiled every try of the %d B probe: %s", size, p.spoiled)
			return row, nil
		case size == hi && p.fits:
			row.LargestFrame, row.MTU, row.AtLeast = int32(hi), int32(hi-overhead), true
			return row, nil
		case size == lo && !p.fits:
			row.Undetermined = fmt.Sprintf("no frame crossed the DUT, not even the smallest (%d B) at %.0f frames/s", lo,
				r.plan.PathMTU.FramesPerSecond)
			return row, nil
		}
	}
	// the MTU an ICMP error named, and one byte more, before any halving: a DUT that says its MTU is
	// taken at its word only where a frame of that size crossed and one a byte larger did not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if row.ICMPMTU > 0 {
			switch named := int(row.ICMPMTU) + overhead; {
			case named > lo && named < hi:
				mid = named // the size it named
			case named == lo && named+1 < hi:
				mid = named + 1 // then a byte more
			}
		}
		p, err := probe(mid)
		if err != nil {
			return row, err
		}
		if p.spoiled != "" {
			row.Undetermined = fmt.Sprintf("the tester spoiled every try of the %d B probe: %s", mid, p.spoiled)
			return row, nil
		}
		if p.fits {
			lo = mid
		} else {
			hi = mid
		}
	}
	// the answer rests on two probes: each is run once more, and a DUT whose answer changed (a frame of a
	// size crossed once and not once) leaves the direction undetermined rather than a transient as its MTU
	for _, size := range []int{lo, hi} {
		first := probed[size]
		delete(probed, size)
		again, err := probe(size)
		if err != nil {
			return row, err
		}
		if again.spoiled != "" {
			row.Undetermined = fmt.Sprintf("the tester spoiled every try of the %d B probe: %s", size, again.spoiled)
			return row, nil
		}
		if again.fits != first.fits {
			row.Undetermined = fmt.Sprintf("frames of %d B crossed the DUT in one probe and not in another: its answer changed", size)
			return row, nil
		}
		probed[size] = pathMTUProbe{fits: first.fits, tooBig: first.tooBig + again.tooBig,
			fragmented: first.fragmented + again.fragmented}
	}
	row.LargestFrame, row.MTU = int32(lo), int32(lo-overhead)
	row.Fragmented = probed[hi].fragmented > 0
	row.Silent = probed[hi].tooBig == 0 && !row.Fragmented
	return row, nil
}

// probePathMTU sends frames of one size in one direction at the finder's rate (its defaults where the plan
// has no finder), repeated while the tester spoils it (spec.tester.validity.invalidTrialRetries); test is
// the kind its record is booked to.
func (r *Runner) probePathMTU(ctx context.Context, test v1alpha1.TestKind, d, size int) (pathMTUProbe, error) {
	if err := r.defineStreams(ctx, []int{size}); err != nil {
		return pathMTUProbe{}, err
	}
	fps, trial := 1000.0, 500*time.Millisecond
	if pm := r.plan.PathMTU; pm != nil {
		fps, trial = pm.FramesPerSecond, pm.Trial
	}
	ts := trialSpec{test: test, size: size, dirs: []int{d}, duration: trial,
		rates: []float64{100 * fps / r.lineFPS(float64(size))}, purposes: []string{"probe"}}
	for try := 0; ; try++ {
		drs, _, err := r.trial(ctx, ts)
		if err != nil {
			return pathMTUProbe{}, err
		}
		if len(drs) != 1 {
			return pathMTUProbe{}, fmt.Errorf("path MTU probe of %d B: %d directions came back, want 1", size, len(drs))
		}
		rec := drs[0].rec
		// a frame that arrived in fragments crossed, but not whole: a hop's MTU is smaller
		p := pathMTUProbe{tooBig: rec.TooBig, mtu: rec.PathMTU, crossed: rec.RxFrames - rec.Fragmented,
			fragmented: rec.Fragmented}
		switch {
		case rec.Fragmented > 0:
			return p, nil // fragments are the DUT's answer, whatever the tester's part: it does not fit
		case rec.RxFrames > 0 && rec.TooBig == 0:
			// frames of the size crossed whole and none was refused: it fits, whatever the tester's lag or
			// pauses (they lose frames, they make none cross)
			p.fits = true
			return p, nil
		case !rec.TesterLimited:
			return p, nil // nothing crossed, or the DUT refused some: the size does not fit
		case try >= r.plan.Validity.InvalidTrialRetries:
			// a refusal is concluded only from a probe the tester did not spoil
			p.spoiled = "the tester spoiled it"
			if len(rec.TesterFaults) > 0 {
				p.spoiled = rec.TesterFaults[0]
			}
			return p, nil
		}
	}
}

// pathMTUNote says the finder's answer in a direction as a person reads it.
func pathMTUNote(row v1alpha1.PathMTUResult, maxFrame int) string {
	switch {
	case row.Undetermined != "":
		return fmt.Sprintf("path MTU %s: undetermined (%s)", row.Direction, row.Undetermined)
	case row.AtLeast:
		return fmt.Sprintf("path MTU %s: frames of %d B, the largest tried (spec.pathMTU.maxFrameSize), crossed the DUT whole: its MTU is at least %d", row.Direction, maxFrame, row.MTU)
	}
	how := "the DUT refused the next larger frame with ICMP"
	if row.ICMPMTU > 0 {
		how += fmt.Sprintf(" naming MTU %d", row.ICMPMTU)
	}
	switch {
	case row.Silent:
		how = "the DUT dropped the next larger frame without any ICMP error: only the probes tell"
	case row.Fragmented:
		how = "the DUT fragmented the next larger frame (sent with DF clear)"
	}
	return fmt.Sprintf("path MTU %s: the DUT carries frames of at most %d B (MTU %d); %s", row.Direction, row.LargestFrame, row.MTU, how)
}
