package runner

import (
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/plan"
)

func TestLocalDevicesMixesFlagsAndPlan(t *testing.T) {
	p := &plan.Plan{Ports: []plan.Port{
		{Name: "west", Driver: v1alpha1.DriverAFPacket, Interface: "net1"},
		{Name: "east", Driver: v1alpha1.DriverAFPacket, Interface: "net2"},
	}}
	devs, err := localDevices(p, map[string]string{"west": "net_memif0,role=server"})
	if err != nil {
		t.Fatal(err)
	}
	if devs[0].Devargs != "net_memif0,role=server" || devs[1].Devargs != "net_af_packet1,iface=net2" {
		t.Fatalf("devices = %+v", devs)
	}
	devs, err = localDevices(p, nil)
	if err != nil || devs[0].Devargs != "net_af_packet0,iface=net1" || devs[1].Devargs != "net_af_packet1,iface=net2" {
		t.Fatalf("devices = %+v, %v", devs, err)
	}
	// two VFs of one SR-IOV resource: the list cannot say which is whose, so the run is refused with the
	// fix (the tester pod has network-status for this, the CLI has --port)
	t.Setenv("PCIDEVICE_INTEL_COM_VF", "0000:3b:02.1,0000:3b:02.3")
	shared := &plan.Plan{Ports: []plan.Port{
		{Name: "west", Driver: v1alpha1.DriverVFIO, Resource: "intel.com/vf"},
		{Name: "east", Driver: v1alpha1.DriverVFIO, Resource: "intel.com/vf"},
	}}
	if _, err := localDevices(shared, nil); err == nil || !strings.Contains(err.Error(), "give --port west=") ||
		!strings.Contains(err.Error(), "could swap") {
		t.Fatalf("two ports of one resource without --port: %v", err)
	}
	// a resource per port is unambiguous
	t.Setenv("PCIDEVICE_INTEL_COM_VF_B", "0000:af:02.1")
	t.Setenv("PCIDEVICE_INTEL_COM_VF", "0000:3b:02.1")
	own := &plan.Plan{Ports: []plan.Port{
		{Name: "west", Driver: v1alpha1.DriverVFIO, Resource: "intel.com/vf"},
		{Name: "east", Driver: v1alpha1.DriverVFIO, Resource: "intel.com/vf_b"},
	}}
	devs, err = localDevices(own, nil)
	if err != nil || devs[0].PCI != "0000:3b:02.1" || devs[1].PCI != "0000:af:02.1" {
		t.Fatalf("devices = %+v, %v", devs, err)
	}
	if _, err := localDevices(p, map[string]string{"north": "net_null0"}); err == nil ||
		!strings.Contains(err.Error(), "--port north: the TrafficTest has no port named north") {
		t.Fatalf("an unknown --port must be named: %v", err)
	}
}
