package rfc2544

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/units"
)

// Before the first trial the runner records what it is about to measure with: each port's device, driver,
// link, speed, largest frame, NUMA node and queues, and the CPUs and NUMA nodes the engine runs on. The
// record goes to the results (status.results.preflight, the report) whether or not the run starts. A port
// whose link stays down, that is slower than traffic.lineRate, or that cannot carry the largest planned
// frame refuses the run: every number from it would be the tester's limit, not the DUT's.

// PreflightError refuses a run before its first trial; Reason is the condition reason a user acts on.
type PreflightError struct {
	Reason, Message string
}

func (e *PreflightError) Error() string { return e.Message }

// IsPreflight says whether err refused the run in preflight, and why.
func IsPreflight(err error) (*PreflightError, bool) {
	var pe *PreflightError
	ok := errors.As(err, &pe)
	return pe, ok
}

// setup addresses the ports, records and checks them (preflight), and resolves their next hops.
func (r *Runner) setup(ctx context.Context) error {
	if err := r.preflight(ctx); err != nil {
		return err
	}
	for i, port := range r.plan.Ports {
		if port.PeerMAC != "" {
			continue
		}
		var err error
		for attempt := 0; attempt < 3; attempt++ {
			if _, err = r.eng.Resolve(ctx, i, r.opt.ResolveTimeout); err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("port %s: resolving gateway %s: %w", port.Name, port.Gateway, err)
		}
	}
	return nil
}

func (r *Runner) preflight(ctx context.Context) error {
	hello, err := r.eng.Hello(ctx)
	if err != nil {
		return err
	}
	pf := &v1alpha1.Preflight{CPUs: int32s(hello.LcoreCPUs), CPUNUMANodes: int32s(hello.LcoreNUMA), MemoryNUMANodes: int32s(hello.MemoryNUMA)}
	var refusals []*PreflightError
	for i, port := range r.plan.Ports {
		info, err := r.portUp(ctx, i, port)
		if err != nil {
			return fmt.Errorf("port %s: %w", port.Name, err)
		}
		pf.Ports = append(pf.Ports, v1alpha1.PortPreflight{Name: port.Name, Device: info.Device, Driver: info.Driver, MAC: info.MAC,
			LinkUp: info.LinkUp, SpeedMbps: info.SpeedMbps, MaxFrame: int32(info.MaxFrame), NUMANode: int32(info.NUMA),
			RxQueues: int32(info.RxQueues), TxQueues: int32(info.TxQueues)})
		if info.SpeedMbps <= 0 {
			r.note(fmt.Sprintf("port %s (%s) reports no link speed: whether it carries spec.traffic.lineRate was not checked, and a port slower than that will show as the tester's limit (its TX queue full)", port.Name, info.Driver))
		}
		if q, flows := info.RxQueues, max(1, r.plan.Traffic.Flows); q > flows {
			// RSS puts every frame of a flow on one queue: the other queues, and their workers, receive nothing
			r.note(fmt.Sprintf("port %s receives on %d queues but each direction has %d flow(s): at most %d of them (and their workers) receive; set traffic.flows to %d or more to spread the analysis over the cores", port.Name, q, flows, flows, 4*q))
		}
		if info.TxQueues > 1 && r.sends(i) {
			// each TX queue's worker sends a lane of the stream; the NIC interleaves the queues in no order
			r.note(fmt.Sprintf("port %s sends each stream on %d TX queues (lanes) and reordering is counted within each lane: a DUT that swaps frames of two lanes (consecutive frames are of different lanes) is not seen reordering them; with one worker per port (tester.cpus) every frame is in one lane", port.Name, info.TxQueues))
		}
		if missing := r.uncheckedChecksums(i, info.RxChecksums); missing != "" {
			r.note(fmt.Sprintf("port %s (%s) does not verify %s checksums on receipt: a frame the DUT corrupts there counts as received", port.Name, info.Driver, missing))
		}
		if r.plan.Traffic.Fragmentable && port.Driver == v1alpha1.DriverAFPacket && r.receives(i) {
			r.note(fmt.Sprintf("port %s (%s) receives through a kernel socket that reassembles IP fragments before the tester sees them (DPDK's af_packet PMD asks for it): a frame the DUT fragmented counts as received when it arrived whole and lost otherwise, but is not counted as fragmented; vfio-pci and af_xdp ports count fragments", port.Name, info.Driver))
		}
		r.noteVFLimits(i, port, info)
		refusals = append(refusals, refusePort(r.plan, port, info, r.opt.LinkWait)...)
	}
	if r.opt.JoinedPorts {
		if err := r.joinPorts(ctx, pf); err != nil {
			return err
		}
	}
	if c := r.plan.Calibration; c != nil {
		if d := c.Mismatch(r.plan.CalibrationShape(), pf); d != "" {
			refusals = append(refusals, &PreflightError{Reason: v1alpha1.ReasonCalibrationMismatch,
				Message: fmt.Sprintf("the tester's calibration of %s does not describe this run (%s): its ceilings would not be this run's; calibrate with this test's ports and traffic (linerate calibrate)",
					c.MeasuredAt.Format(time.RFC3339), d)})
		}
	}
	pf.Warnings = placementWarnings(pf)
	for _, w := range pf.Warnings {
		r.note(w)
	}
	r.res.Preflight = pf
	// the record reaches the status and the report even when the run is refused
	r.sink.OnResults(r.res)
	if len(refusals) > 0 {
		msgs := make([]string, len(refusals))
		for i, e := range refusals {
			msgs[i] = e.Message
		}
		return &PreflightError{Reason: refusals[0].Reason, Message: "preflight: " + strings.Join(msgs, "; ")}
	}
	return nil
}

// portUp addresses port i and waits up to LinkWait for its link (a VF's link comes up a moment after the
// engine starts it).
func (r *Runner) portUp(ctx context.Context, i int, port plan.Port) (*engine.PortInfo, error) {
	cfg := engine.PortConfig{ID: i, PeerMAC: port.PeerMAC, VLAN: r.plan.Traffic.VLAN}
	if r.plan.Traffic.IPVersion == 6 {
		cfg.IP6, cfg.GW6 = port.Address, port.Gateway
	} else {
		cfg.IP4, cfg.GW4 = port.Address, port.Gateway
	}
	const poll = 250 * time.Millisecond
	for waited := time.Duration(0); ; waited += poll {
		info, err := r.eng.Port(ctx, cfg)
		if err != nil || info.LinkUp || waited >= r.opt.LinkWait {
			return info, err
		}
		if err := r.opt.Sleep(ctx, poll); err != nil {
			return nil, err
		}
	}
}

// joinPorts addresses each port to the other's MAC: with the ports joined by a wire (or a NIC's embedded
// switch) and no DUT, there is no next hop to resolve.
func (r *Runner) joinPorts(ctx context.Context, pf *v1alpha1.Preflight) error {
	for i := range r.plan.Ports {
		port := &r.plan.Ports[i]
		port.Gateway, port.PeerMAC = "", pf.Ports[1-i].MAC
		if _, err := r.portUp(ctx, i, *port); err != nil {
			return fmt.Errorf("port %s: %w", port.Name, err)
		}
	}
	return nil
}

// refusePort says what about a port makes the plan unmeasurable through it.
func refusePort(p *plan.Plan, port plan.Port, info *engine.PortInfo, waited time.Duration) []*PreflightError {
	var out []*PreflightError
	name := port.Name
	if info.Device != "" {
		name += " (" + info.Device + ")"
	}
	if !info.LinkUp {
		out = append(out, &PreflightError{Reason: v1alpha1.ReasonPortLinkDown,
			Message: fmt.Sprintf("port %s: link down after %s; check the cable and the switch port, and the VF's link state (ip link set <PF> vf <n> state auto)", name, waited)})
	}
	if info.SpeedMbps > 0 && info.SpeedMbps*1_000_000 < p.Traffic.LineRateBps {
		out = append(out, &PreflightError{Reason: v1alpha1.ReasonPortSlowerThanLineRate,
			Message: fmt.Sprintf("port %s: link at %d Mbit/s, slower than traffic.lineRate %s: every rate above it would be the port's limit; set traffic.lineRate to the link's speed",
				name, info.SpeedMbps, units.FormatBits(p.Traffic.LineRateBps))})
	}
	if info.Driver == "net_af_xdp" && info.KernelRxQueues == 0 {
		out = append(out, &PreflightError{Reason: v1alpha1.ReasonPortQueuesUnbound,
			Message: fmt.Sprintf("port %s: af_xdp, and the engine could not read how many receive queues its interface has: frames the NIC puts on queues the port does not bind go to the kernel, not the tester, and would count as lost; use driver af_packet, which reads them all", name)})
	}
	if info.Driver == "net_af_xdp" && info.KernelRxQueues > info.RxQueues {
		// the NIC spreads received frames over all its queues; the PMD's XDP program hands the frames of
		// the queues it has no socket on to the kernel, and the tester would count them as the DUT's loss
		iface := port.Interface
		if iface == "" {
			iface = "<interface>"
		}
		out = append(out, &PreflightError{Reason: v1alpha1.ReasonPortQueuesUnbound,
			Message: fmt.Sprintf("port %s: af_xdp receives on %d of interface %s's %d receive queues: frames the NIC puts on the others go to the kernel, not the tester, and would count as lost; give the interface %d queue(s) (ethtool -L %s combined %d) or use driver af_packet, which reads them all",
				name, info.RxQueues, iface, info.KernelRxQueues, info.RxQueues, iface, info.RxQueues)})
	}
	if info.Driver == "net_af_xdp" && info.KernelFirstRxQueue > 0 {
		// the NIC puts on queue 0 what RSS does not hash (ARP and neighbour discovery among it), and its
		// RSS table spreads the rest from queue 0 unless set otherwise (which the count above refuses):
		// the frames of the queues before the first one the port binds go to the kernel
		before := "queue 0"
		if info.KernelFirstRxQueue > 1 {
			before = fmt.Sprintf("queues 0 to %d", info.KernelFirstRxQueue-1)
		}
		// (only the CLI's raw --port devargs can say start_queue: the operator binds from queue 0)
		iface := port.Interface
		if iface == "" {
			iface = "<interface>"
		}
		out = append(out, &PreflightError{Reason: v1alpha1.ReasonPortQueuesUnbound,
			Message: fmt.Sprintf("port %s: af_xdp binds interface %s's receive queues from %d on (start_queue=%d): frames the NIC puts on %s (what RSS does not hash, ARP among it, and what its table spreads there) go to the kernel, not the tester, and would count as lost; bind from queue 0 (start_queue=0) or use driver af_packet, which reads them all",
				name, iface, info.KernelFirstRxQueue, info.KernelFirstRxQueue, before)})
	}
	if largest := p.LargestFrame(); info.MaxFrame > 0 && largest > info.MaxFrame {
		lower := "set dut.maxFrameSize"
		if p.PathMTU != nil && p.PathMTU.MaxFrame == largest {
			lower = "lower spec.pathMTU.maxFrameSize (the path MTU finder's largest frame)"
		}
		out = append(out, &PreflightError{Reason: v1alpha1.ReasonFrameTooLargeForPort,
			Message: fmt.Sprintf("port %s: carries frames up to %d B, the plan's largest is %d B: raise the VF's MTU (SriovNetworkNodePolicy mtu, or ip link set <PF> mtu) or %s", name, info.MaxFrame, largest, lower)})
	}
	return out
}

// placementWarnings names the ports the engine reaches across NUMA nodes: from cores or hugepages on
// another node every frame crosses the interconnect, and the tester may become the limit.
func placementWarnings(pf *v1alpha1.Preflight) []string {
	var out []string
	for _, p := range pf.Ports {
		if p.NUMANode < 0 {
			continue
		}
		var cpus []string
		for i, n := range pf.CPUNUMANodes {
			if n != p.NUMANode && i < len(pf.CPUs) {
				cpus = append(cpus, fmt.Sprintf("%d (node %d)", pf.CPUs[i], n))
			}
		}
		name := p.Name
		if p.Device != "" {
			name += " (" + p.Device + ")"
		}
		if len(cpus) > 0 {
			out = append(out, fmt.Sprintf("port %s is on NUMA node %d, but the engine runs on CPU %s: every frame crosses the interconnect; "+
				"give the kubelet topologyManagerPolicy single-numa-node (config/samples/sriov/README.md)", name, p.NUMANode, strings.Join(cpus, ", ")))
		}
		if len(pf.MemoryNUMANodes) > 0 && !slices.Contains(pf.MemoryNUMANodes, p.NUMANode) {
			out = append(out, fmt.Sprintf("port %s is on NUMA node %d, but the engine's hugepages are on node %s: every frame is written across the interconnect",
				name, p.NUMANode, joinInt32(pf.MemoryNUMANodes)))
		}
	}
	return out
}

func int32s(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func joinInt32(v []int32) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(int(x))
	}
	return strings.Join(s, ",")
}

// noteVFLimits says what a port cannot see that a test relies on, as an 82599 VF (ixgbevf) cannot: frames it
// drops on receipt (no miss counter: a trial is then judged by how long its ring was left unread,
// engine.TesterFaults), frames for other MACs (not promiscuous, or not confirmed to be: foreign frames may
// not be counted), and an RSS spread by UDP ports (its PF hashes IPv4 UDP on the addresses only unless told).
// rxQueues is how many RX queues port i receives on, by the preflight (1 before it ran).
func (r *Runner) rxQueues(i int) int {
	if pf := r.res.Preflight; pf != nil && i < len(pf.Ports) && pf.Ports[i].RxQueues > 0 {
		return int(pf.Ports[i].RxQueues)
	}
	return 1
}

func (r *Runner) noteVFLimits(i int, port plan.Port, info *engine.PortInfo) {
	if !r.receives(i) {
		return
	}
	if !info.RxMissesCounted {
		r.note(fmt.Sprintf("port %s (%s) counts none of the frames its receive ring of %d drops: a trial is the tester's (invalid), never the DUT's, when its ring was left unread long enough to overflow at the rate frames came (dataplane/PROTOCOL.md, the tester's health)", port.Name, info.Driver, info.RxRing))
	}
	if !info.Promiscuous {
		r.note(notPromiscuous(port.Name, info.Driver))
	}
	if info.RxQueues > 1 && info.Driver == "net_ixgbe_vf" && !r.variesAddresses() {
		r.note(fmt.Sprintf("port %s (%s) receives on %d queues, but its PF hashes IPv4 UDP on the addresses only and the streams vary only UDP ports: every frame lands on one queue; vary src or dst (traffic.vary), or on the PF's host: ethtool -N <pf> rx-flow-hash udp4 sdfn", port.Name, info.Driver, info.RxQueues))
	}
}

// notPromiscuous says what a port the engine reports not promiscuous misses, and what can be done about it. A
// VF's PF may answer its request yes and grant less, so the engine reports such a VF not promiscuous
// whatever the answer (dataplane/PROTOCOL.md): which of its PFs do what is what the user needs to know.
func notPromiscuous(name, driver string) string {
	const misses = "it may receive only frames for its own MAC, broadcast and multicast, so frames the DUT sends to another MAC may not be counted as foreign"
	switch driver {
	case "net_ixgbe_vf":
		// ixgbe_update_vf_xcast_mode: an untrusted VF gets multicast and a yes; an 82599's VF is refused even
		// trusted; a later NIC's trusted VF is granted it only while the PF itself is promiscuous
		return fmt.Sprintf("port %s (%s): the VF's promiscuous mode is not confirmed: with trust off its PF (Linux ixgbe) grants only multicast and still answers yes, an 82599's VF is refused it even with trust on, and an X540's or X550's is granted it only with trust on and the PF promiscuous; %s", name, driver, misses)
	case "net_iavf":
		// i40e and ice "lie to the VF on purpose" when it is not trusted
		return fmt.Sprintf("port %s (%s): the VF's promiscuous mode is not confirmed: with trust off its PF (Linux i40e or ice) answers yes and grants nothing; set trust on in the SriovNetwork (trust: \"on\"); %s", name, driver, misses)
	}
	return fmt.Sprintf("port %s (%s) is not promiscuous (it refused): it receives only frames for its own MAC, broadcast and multicast, so frames the DUT sends to another MAC are not counted as foreign", name, driver)
}

// receives says whether port i receives a direction of the plan.
func (r *Runner) receives(i int) bool {
	return slices.ContainsFunc(r.plan.Directions(), func(d plan.Direction) bool { return d.RX == i })
}

// variesAddresses says whether the flows vary an IP address (what an RSS hash on addresses spreads).
func (r *Runner) variesAddresses() bool {
	return slices.ContainsFunc(r.plan.Traffic.Vary, func(f string) bool { return f == "srcIP" || f == "dstIP" })
}

// sends says whether port i sends test frames in this plan.
func (r *Runner) sends(i int) bool {
	return slices.ContainsFunc(r.plan.Directions(), func(d plan.Direction) bool { return d.TX == i })
}

// uncheckedChecksums names the checksums of the test frames that port i receives and does not verify
// (rxChecksums: the engine's list, "ipv4,udp"), "" when it verifies them all or receives nothing.
func (r *Runner) uncheckedChecksums(i int, rxChecksums string) string {
	if !slices.ContainsFunc(r.plan.Directions(), func(d plan.Direction) bool { return d.RX == i }) {
		return ""
	}
	checked := strings.Split(rxChecksums, ",")
	var missing []string
	if r.plan.Traffic.IPVersion != 6 && !slices.Contains(checked, "ipv4") {
		missing = append(missing, "IPv4 header")
	}
	if !slices.Contains(checked, "udp") {
		missing = append(missing, "UDP")
	}
	return strings.Join(missing, " and ")
}
