package plan

import (
	"fmt"
	"net/netip"

	"linerate.dev/linerate/api/v1alpha1"
)

// RFC 2544 Appendix C puts the tester on 198.18.1.2 and 198.19.1.2 behind a DUT at .1; RFC 5180 gives
// IPv6 benchmarking the prefix 2001:2::/48.
var defaultAddress = map[int][2][2]string{
	4: {{"198.18.1.2/24", "198.18.1.1"}, {"198.19.1.2/24", "198.19.1.1"}},
	6: {{"2001:2:0:1::2/64", "2001:2:0:1::1"}, {"2001:2:0:2::2/64", "2001:2:0:2::1"}},
}

func resolvePort(i int, s *v1alpha1.PortSpec, ipVersion int) (Port, error) {
	field := fmt.Sprintf("spec.ports[%d]", i)
	p := Port{Name: s.Name, Driver: s.Driver, Interface: s.Interface, Resource: s.Resource, Network: s.Network,
		Address: s.Address, Gateway: s.Gateway, PeerMAC: s.PeerMAC, Node: s.Node}
	if p.Driver == "" {
		p.Driver = v1alpha1.DriverVFIO
	}
	// the interface Multus names the port's attachment: a kernel port's device, a VF port's key into the
	// pod's network-status (which VF is whose)
	if p.Interface == "" && (p.Driver != v1alpha1.DriverVFIO || p.Network != "") {
		p.Interface = fmt.Sprintf("net%d", i+1)
	}
	if p.Address == "" {
		p.Address = defaultAddress[ipVersion][i][0]
		if p.Gateway == "" && p.PeerMAC == "" {
			p.Gateway = defaultAddress[ipVersion][i][1]
		}
	}
	pfx, err := netip.ParsePrefix(p.Address)
	if err != nil {
		return Port{}, fmt.Errorf("%s.address: %q is not an address with prefix length (e.g. 198.18.1.2/24)", field, p.Address)
	}
	if (ipVersion == 6) != pfx.Addr().Is6() {
		return Port{}, fmt.Errorf("%s.address: %s is not an IPv%d address (traffic.ipVersion)", field, p.Address, ipVersion)
	}
	if p.Gateway == "" && p.PeerMAC == "" {
		return Port{}, fmt.Errorf("%s: give a gateway (routed DUT) or a peerMAC (transparent DUT)", field)
	}
	if p.Gateway != "" {
		gw, err := netip.ParseAddr(p.Gateway)
		if err != nil || gw.Is6() != pfx.Addr().Is6() {
			return Port{}, fmt.Errorf("%s.gateway: %q is not an IPv%d address", field, p.Gateway, ipVersion)
		}
		if !pfx.Masked().Contains(gw) {
			return Port{}, fmt.Errorf("%s.gateway: %s is not in the port's subnet %s", field, gw, pfx.Masked())
		}
	}
	return p, nil
}

// interfacesApart refuses two ports on one interface of one tester pod (as the spec names it, or as
// Multus's net1 and net2 by default): af_packet would put their sockets in one fanout group, each taking
// a share of the other's frames, and Multus cannot attach one name twice. Ports on two different nodes
// are two pods.
func (p *Plan) interfacesApart() error {
	a, b := p.Ports[0], p.Ports[1]
	if a.Node != "" && b.Node != "" && a.Node != b.Node {
		return nil
	}
	used := func(q Port) bool { return q.Interface != "" && (q.Driver != v1alpha1.DriverVFIO || q.Network != "") }
	if used(a) && used(b) && a.Interface == b.Interface {
		return fmt.Errorf("spec.ports[1].interface: ports %s and %s would both use interface %s of one tester pod, where each takes a share of the other's frames: give each port its own interface, or pin the ports to two different nodes (ports[].node)",
			a.Name, b.Name, a.Interface)
	}
	return nil
}

// resolvePorts are the spec's two ports, addressed, on interfaces apart.
func (p *Plan) resolvePorts(ports []v1alpha1.PortSpec) error {
	if len(ports) != 2 {
		return fmt.Errorf("spec.ports: exactly two ports are needed, %d given", len(ports))
	}
	if ports[0].Name == ports[1].Name {
		return fmt.Errorf("spec.ports: the two ports need distinct names")
	}
	for i := range ports {
		port, err := resolvePort(i, &ports[i], p.Traffic.IPVersion)
		if err != nil {
			return err
		}
		p.Ports = append(p.Ports, port)
	}
	return p.interfacesApart()
}
