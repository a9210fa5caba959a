package devices

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

// PCIDeviceEnv is the environment variable in which the SR-IOV device plugin passes the PCI addresses of
// a resource: PCIDEVICE_<prefix>_<name> upper-cased with '.' as '_' (a '-' stays, as the plugin leaves it).
func PCIDeviceEnv(resource string) string {
	r := strings.NewReplacer(".", "_", "/", "_")
	return "PCIDEVICE_" + strings.ToUpper(r.Replace(resource))
}

// PlanDevices makes the engine's device list for the ports of a plan: vdevs for kernel interfaces, and for
// VFs the PCI address of the VF each port's attachment got (Attachment), or the device plugin's only
// address of the port's resource (getenv) where that is unambiguous.
func PlanDevices(ports []plan.Port, getenv func(string) string, atts []Attachment) ([]Device, error) {
	dp := NewDevicePlanner(getenv, atts, ports)
	var out []Device
	for i, p := range ports {
		d, err := dp.Device(i, p)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// DevicePlanner builds the device of one port at a time, for callers that take some ports' devices
// from elsewhere (the CLI's --port): vdev names carry the port's position so they stay unique in one
// EAL.
type DevicePlanner struct {
	getenv func(string) string
	atts   []Attachment
	ports  []plan.Port
}

// NewDevicePlanner reads the device plugin's variables through getenv (os.Getenv when nil) and the pod's
// attachments atts; ports are the ports planned together (which of them share a resource).
func NewDevicePlanner(getenv func(string) string, atts []Attachment, ports []plan.Port) *DevicePlanner {
	if getenv == nil {
		getenv = os.Getenv
	}
	return &DevicePlanner{getenv: getenv, atts: atts, ports: ports}
}

// Device is the device of port p at position index of the plan.
func (dp *DevicePlanner) Device(index int, p plan.Port) (Device, error) {
	switch p.Driver {
	case v1alpha1.DriverAFPacket:
		return Device{Devargs: fmt.Sprintf("net_af_packet%d,iface=%s", index, p.Interface)}, nil
	case v1alpha1.DriverAFXDP:
		return Device{Devargs: fmt.Sprintf("net_af_xdp%d,iface=%s", index, p.Interface)}, nil
	case v1alpha1.DriverVFIO, "":
		addr, err := dp.vf(p)
		if err != nil {
			return Device{}, err
		}
		return Device{PCI: addr, Devargs: addr}, nil
	default:
		return Device{}, fmt.Errorf("port %s: unknown driver %q", p.Name, p.Driver)
	}
}

// vf is the PCI address of a VF port. The device plugin lists a resource's VFs in no promised order
// (kubelet allocates devices as a set), so with two ports on one resource the list cannot say which VF
// is whose: only the attachment Multus reports for the port's network can.
func (dp *DevicePlanner) vf(p plan.Port) (string, error) {
	env := PCIDeviceEnv(p.Resource)
	var listed []string
	if val := strings.TrimSpace(dp.getenv(env)); val != "" {
		for _, a := range strings.Split(val, ",") {
			listed = append(listed, strings.TrimSpace(a))
		}
	}
	if a, ok := attachmentOf(dp.atts, p.Interface, p.Network); ok && a.PCIAddress() != "" {
		addr := a.PCIAddress()
		if len(listed) > 0 && !slices.Contains(listed, addr) {
			return "", fmt.Errorf("port %s: its attachment %s has VF %s, which is not among the devices of resource %q the device plugin gave this pod (%s=%s): the port's network and resource name different pools",
				p.Name, a.Name, addr, p.Resource, env, strings.Join(listed, ","))
		}
		return addr, nil
	}
	if len(listed) == 0 {
		return "", fmt.Errorf("port %s: %s is empty: the SR-IOV device plugin gave this pod no device of resource %q", p.Name, env, p.Resource)
	}
	var sharing []string
	for _, q := range dp.ports {
		if q.Resource == p.Resource && (q.Driver == v1alpha1.DriverVFIO || q.Driver == "") {
			sharing = append(sharing, q.Name)
		}
	}
	if len(sharing) > 1 || len(listed) > 1 {
		why := fmt.Sprintf("%s lists %d VFs (%s)", env, len(listed), strings.Join(listed, ","))
		if len(sharing) > 1 {
			why = fmt.Sprintf("ports %s share resource %q", strings.Join(sharing, " and "), p.Resource)
		}
		return "", fmt.Errorf("port %s: %s, and the pod's network-status names no VF for the port: the device plugin lists VFs in no fixed order, so the ports could swap. Give each port a network whose attachment Multus reports with its device (SR-IOV CNI and device plugin), or each port its own resource (one SriovNetworkNodePolicy per PF)",
			p.Name, why)
	}
	return listed[0], nil
}
