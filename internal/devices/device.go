// Package devices finds the device behind each port of a plan, as the engine's EAL is given it: a kernel
// interface as a vdev (af_packet, af_xdp), an SR-IOV VF by its PCI address, which the pod's Multus
// network-status names for the port's attachment (or the device plugin's environment, where that cannot mix
// two ports up), or the raw DPDK devargs of the CLI's --port.
package devices

import (
	"errors"
	"fmt"
	"strings"
)

// Device is how EAL finds one port: a PCI address (allow-listed with -a) or a virtual device (--vdev).
type Device struct {
	PCI     string // e.g. 0000:3b:02.1
	Devargs string // e.g. net_af_packet0,iface=net1 (vdev) or 0000:3b:02.1,foo=bar (PCI with devargs)
}

// IsPCI says whether the device is probed from the PCI bus.
func (d Device) IsPCI() bool { return d.PCI != "" }

// EALArg is the EAL argument pair that attaches the device.
func (d Device) EALArg() []string {
	if d.IsPCI() {
		return []string{"-a", d.Devargs}
	}
	return []string{"--vdev", d.Devargs}
}

// ParseDevargs turns a --port value of the CLI (raw DPDK devargs) into a Device: names starting with
// net_ are virtual devices, anything else is taken as a PCI address with optional devargs.
func ParseDevargs(s string) (Device, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Device{}, errors.New("empty devargs")
	}
	name, _, _ := strings.Cut(s, ",")
	if strings.HasPrefix(name, "net_") || strings.HasPrefix(name, "eth_") {
		return Device{Devargs: s}, nil
	}
	if strings.Count(name, ":") >= 1 && strings.Contains(name, ".") {
		return Device{PCI: name, Devargs: s}, nil
	}
	return Device{}, fmt.Errorf("%q is neither a virtual device (net_af_packet0,iface=eth0) nor a PCI address (0000:3b:02.1)", s)
}
