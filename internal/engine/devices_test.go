package engine_test

import (
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
)

func TestPlanDevicesNumbersVdevsAndSharesResources(t *testing.T) {
	env := map[string]string{"PCIDEVICE_INTEL_COM_SRIOV_82599": "0000:3b:02.1, 0000:3b:02.3"}
	getenv := func(k string) string { return env[k] }
	vf := plan.Port{Driver: v1alpha1.DriverVFIO, Resource: "intel.com/sriov_82599"}
	west, east := vf, vf
	west.Name, east.Name = "west", "east"
	devs, err := engine.PlanDevices([]plan.Port{west, east}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if devs[0].PCI != "0000:3b:02.1" || devs[1].PCI != "0000:3b:02.3" {
		t.Fatalf("two ports of one resource must take its addresses in turn: %+v", devs)
	}

	kernel := []plan.Port{
		{Name: "west", Driver: v1alpha1.DriverAFPacket, Interface: "net1"},
		{Name: "east", Driver: v1alpha1.DriverAFXDP, Interface: "net2"},
	}
	devs, err = engine.PlanDevices(kernel, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if devs[0].Devargs != "net_af_packet0,iface=net1" || devs[1].Devargs != "net_af_xdp1,iface=net2" {
		t.Fatalf("vdevs are named by port position: %+v", devs)
	}

	// one port's device from elsewhere (the CLI's --port): the other keeps its position's name
	dp := engine.NewDevicePlanner(getenv)
	d, err := dp.Device(1, plan.Port{Name: "east", Driver: v1alpha1.DriverAFPacket, Interface: "veth1"})
	if err != nil || d.Devargs != "net_af_packet1,iface=veth1" {
		t.Fatalf("Device(1) = %+v, %v", d, err)
	}
}

func TestPlanDevicesNamesWhatIsMissing(t *testing.T) {
	one := func(k string) string {
		if k == "PCIDEVICE_INTEL_COM_VF" {
			return "0000:3b:02.1"
		}
		return ""
	}
	vf := plan.Port{Name: "west", Driver: v1alpha1.DriverVFIO, Resource: "intel.com/vf"}
	for _, c := range []struct {
		ports []plan.Port
		want  string
	}{
		{[]plan.Port{{Name: "west", Driver: v1alpha1.DriverVFIO, Resource: "intel.com/other"}}, "PCIDEVICE_INTEL_COM_OTHER is empty"},
		{[]plan.Port{vf, {Name: "east", Driver: v1alpha1.DriverVFIO, Resource: "intel.com/vf"}}, "port east: PCIDEVICE_INTEL_COM_VF has 1 address(es)"},
		{[]plan.Port{{Name: "west", Driver: "dpdk-magic"}}, `port west: unknown driver "dpdk-magic"`},
	} {
		_, err := engine.PlanDevices(c.ports, one)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("PlanDevices(%+v) error = %v, want it to contain %q", c.ports, err, c.want)
		}
	}
}
