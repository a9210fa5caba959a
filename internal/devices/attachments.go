package devices

import (
	"encoding/json"
	"fmt"
	"strings"
)

// NetworkStatusAnnotation is where Multus reports a pod's attachments, each with the device the CNI
// plugin gave it (k8s.v1.cni.cncf.io/network-status). The tester pod sees it through a downward API file.
const NetworkStatusAnnotation = "k8s.v1.cni.cncf.io/network-status"

// Attachment is one entry of the network-status annotation, as Multus writes it. DeviceInfo follows the
// Network Plumbing WG's Device Information Specification (1.0/1.1): the SR-IOV device plugin writes it
// for the VF it allocated, and Multus copies it into the entry of the attachment that uses the VF.
type Attachment struct {
	// Name is "<namespace>/<network>" of the NetworkAttachmentDefinition.
	Name       string      `json:"name"`
	Interface  string      `json:"interface,omitempty"`
	Default    bool        `json:"default,omitempty"`
	DeviceInfo *DeviceInfo `json:"device-info,omitempty"`
}

// DeviceInfo is the device of an attachment.
type DeviceInfo struct {
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
	PCI     *struct {
		PCIAddress string `json:"pci-address"`
	} `json:"pci,omitempty"`
}

// PCIAddress is the attachment's PCI device ("" when it has none).
func (a Attachment) PCIAddress() string {
	if a.DeviceInfo == nil || a.DeviceInfo.Type != "pci" || a.DeviceInfo.PCI == nil {
		return ""
	}
	return strings.TrimSpace(a.DeviceInfo.PCI.PCIAddress)
}

// ParseNetworkStatus reads the network-status annotation's value.
func ParseNetworkStatus(data []byte) ([]Attachment, error) {
	if strings.TrimSpace(string(data)) == "" {
		return nil, nil
	}
	var out []Attachment
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", NetworkStatusAnnotation, err)
	}
	return out, nil
}

// attachmentOf finds the attachment of a port: by the interface name the operator asked Multus for,
// else by its network (a bare name matches any namespace, if only one does).
func attachmentOf(atts []Attachment, iface, network string) (Attachment, bool) {
	if iface != "" {
		for _, a := range atts {
			if a.Interface == iface && !a.Default {
				return a, true
			}
		}
	}
	if network == "" {
		return Attachment{}, false
	}
	var found []Attachment
	for _, a := range atts {
		_, name, hasNS := strings.Cut(a.Name, "/")
		if a.Name == network || (!strings.Contains(network, "/") && hasNS && name == network) {
			found = append(found, a)
		}
	}
	if len(found) != 1 {
		return Attachment{}, false
	}
	return found[0], true
}
