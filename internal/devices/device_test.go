package devices_test

import (
	"testing"

	"linerate.dev/linerate/internal/devices"
)

func TestParseDevargs(t *testing.T) {
	for _, c := range []struct {
		in      string
		pci     string
		wantErr bool
	}{
		{"net_af_packet0,iface=eth1", "", false},
		{"0000:3b:02.1", "0000:3b:02.1", false},
		{"0000:3b:02.1,rxq_pkt_fill=1", "0000:3b:02.1", false},
		{"eth1", "", true},
		{"", "", true},
	} {
		d, err := devices.ParseDevargs(c.in)
		if (err != nil) != c.wantErr || d.PCI != c.pci {
			t.Errorf("ParseDevargs(%q) = %+v, %v", c.in, d, err)
		}
	}
}
