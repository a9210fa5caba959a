package devices_test

import (
	"strings"
	"testing"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/plan"
)

// networkStatus is the pod's k8s.v1.cni.cncf.io/network-status as Multus writes it: the cluster network
// first, then one entry per attachment, each VF's with the device-info the SR-IOV device plugin wrote.
func networkStatus(west, east string) string {
	return `[{
    "name": "cbr0",
    "interface": "eth0",
    "ips": [
        "10.244.1.6"
    ],
    "mac": "3e:a5:8a:3c:11:2c",
    "default": true,
    "dns": {}
},{
    "name": "lab/sriov-west",
    "interface": "net1",
    "dns": {},
    "device-info": {
        "type": "pci",
        "version": "1.1.0",
        "pci": {
            "pci-address": "` + west + `"
        }
    }
},{
    "name": "lab/sriov-east",
    "interface": "net2",
    "dns": {},
    "device-info": {
        "type": "pci",
        "version": "1.1.0",
        "pci": {
            "pci-address": "` + east + `"
        }
    }
}]`
}

func vfPorts(resWest, resEast string) []plan.Port {
	return []plan.Port{
		{Name: "west", Driver: v1alpha1.DriverVFIO, Resource: resWest, Network: "sriov-west", Interface: "net1"},
		{Name: "east", Driver: v1alpha1.DriverVFIO, Resource: resEast, Network: "lab/sriov-east", Interface: "net2"},
	}
}

// Each port gets the VF of its own attachment, whatever order the device plugin lists a shared
// resource's VFs in; without attachments the environment is used only where it cannot mix ports up.
func TestEachPortGetsTheVFOfItsAttachment(t *testing.T) {
	const res = "intel.com/sriov_82599"
	for _, c := range []struct {
		name       string
		env        string // PCIDEVICE_INTEL_COM_SRIOV_82599
		status     string
		ports      []plan.Port
		west, east string
		err        string
	}{
		{name: "one resource, device plugin lists west's VF first", env: "0000:3b:02.1,0000:3b:02.3",
			status: networkStatus("0000:3b:02.1", "0000:3b:02.3"), ports: vfPorts(res, res), west: "0000:3b:02.1", east: "0000:3b:02.3"},
		{name: "one resource, device plugin lists east's VF first", env: "0000:3b:02.1,0000:3b:02.3",
			status: networkStatus("0000:3b:02.3", "0000:3b:02.1"), ports: vfPorts(res, res), west: "0000:3b:02.3", east: "0000:3b:02.1"},
		{name: "attachments matched by network when the interface is not the one asked for", env: "0000:3b:02.1,0000:3b:02.3",
			status: strings.NewReplacer(`"net1"`, `"eth7"`, `"net2"`, `"eth8"`).Replace(networkStatus("0000:3b:02.3", "0000:3b:02.1")),
			ports:  vfPorts(res, res), west: "0000:3b:02.3", east: "0000:3b:02.1"},
		{name: "one resource, no network-status", env: "0000:3b:02.1,0000:3b:02.3", ports: vfPorts(res, res),
			err: `port west: ports west and east share resource "intel.com/sriov_82599", and the pod's network-status names no VF for the port`},
		{name: "a resource per port, no network-status, one of them empty", env: "0000:3b:02.1", ports: vfPorts(res, res+"_b"),
			err: "PCIDEVICE_INTEL_COM_SRIOV_82599_B is empty"},
		{name: "attachment's VF not the resource's", env: "0000:3b:02.1,0000:3b:02.3",
			status: networkStatus("0000:3b:02.5", "0000:3b:02.1"), ports: vfPorts(res, res),
			err: "its attachment lab/sriov-west has VF 0000:3b:02.5, which is not among the devices of resource"},
		{name: "no device at all", ports: vfPorts(res, res), err: "PCIDEVICE_INTEL_COM_SRIOV_82599 is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"PCIDEVICE_INTEL_COM_SRIOV_82599": c.env}
			atts, err := devices.ParseNetworkStatus([]byte(c.status))
			if err != nil {
				t.Fatal(err)
			}
			devs, err := devices.PlanDevices(c.ports, func(k string) string { return env[k] }, atts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if devs[0].PCI != c.west || devs[1].PCI != c.east {
				t.Errorf("west %s east %s, want west %s east %s", devs[0].PCI, devs[1].PCI, c.west, c.east)
			}
		})
	}
	// one VF per resource and no network-status: the environment cannot be wrong
	env := map[string]string{"PCIDEVICE_INTEL_COM_PF0": "0000:3b:02.1", "PCIDEVICE_INTEL_COM_PF1": "0000:af:02.1"}
	devs, err := devices.PlanDevices(vfPorts("intel.com/pf0", "intel.com/pf1"), func(k string) string { return env[k] }, nil)
	if err != nil || devs[0].PCI != "0000:3b:02.1" || devs[1].PCI != "0000:af:02.1" {
		t.Errorf("a resource per port: %+v %v", devs, err)
	}
}

func TestKernelPortsAreVdevsNamedByPosition(t *testing.T) {
	kernel := []plan.Port{
		{Name: "west", Driver: v1alpha1.DriverAFPacket, Interface: "net1"},
		{Name: "east", Driver: v1alpha1.DriverAFXDP, Interface: "net2"},
	}
	devs, err := devices.PlanDevices(kernel, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if devs[0].Devargs != "net_af_packet0,iface=net1" || devs[1].Devargs != "net_af_xdp1,iface=net2" {
		t.Fatalf("vdevs are named by port position: %+v", devs)
	}
	// one port's device from elsewhere (the CLI's --port): the other keeps its position's name
	dp := devices.NewDevicePlanner(nil, nil, kernel)
	d, err := dp.Device(1, plan.Port{Name: "east", Driver: v1alpha1.DriverAFPacket, Interface: "veth1"})
	if err != nil || d.Devargs != "net_af_packet1,iface=veth1" {
		t.Fatalf("Device(1) = %+v, %v", d, err)
	}
	if _, err := devices.PlanDevices([]plan.Port{{Name: "west", Driver: "dpdk-magic"}}, nil, nil); err == nil ||
		!strings.Contains(err.Error(), `port west: unknown driver "dpdk-magic"`) {
		t.Errorf("unknown driver: %v", err)
	}
}

// The SR-IOV device plugin names a resource's variable PCIDEVICE_<prefix>_<name>, upper-cased, with only
// '.' made '_' (k8snetworkplumbingwg/sriov-network-device-plugin, ResourcePoolImpl.GetEnvs): a '-', which
// its resource names may hold (^[a-zA-Z0-9_-]+$) as domains may, stays. Looking a '-' up as '_' would
// find nothing on a real cluster.
func TestPCIDeviceEnvIsTheDevicePluginsName(t *testing.T) {
	for _, c := range []struct{ resource, env string }{
		{"intel.com/sriov_82599", "PCIDEVICE_INTEL_COM_SRIOV_82599"},
		{"intel.com/sriov-82599", "PCIDEVICE_INTEL_COM_SRIOV-82599"},
		{"openshift.io/ens1f0-vfs", "PCIDEVICE_OPENSHIFT_IO_ENS1F0-VFS"},
		{"lab-1.example.com/vf", "PCIDEVICE_LAB-1_EXAMPLE_COM_VF"},
	} {
		if got := devices.PCIDeviceEnv(c.resource); got != c.env {
			t.Errorf("resource %s: %s, the device plugin sets %s", c.resource, got, c.env)
		}
	}
}
