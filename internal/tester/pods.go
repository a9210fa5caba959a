// Package tester renders the Kubernetes objects of a TrafficTest's tester: the pod(s) running the DPDK
// engine and the runner, and the ServiceAccount, Role and RoleBinding through which the runner writes its
// results (only to the TrafficTest's own results ConfigMap).
package tester

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/cgroupcpu"
	"linerate.dev/linerate/internal/devices"
	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/plan"
	"linerate.dev/linerate/internal/results"
)

// Labels and annotations on everything the operator creates for a TrafficTest.
const (
	LabelTest      = "linerate.dev/traffictest"
	LabelRole      = "linerate.dev/role"
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// NetworksAnnotation is Multus' list of extra networks of a pod.
	NetworksAnnotation = "k8s.v1.cni.cncf.io/networks"
	// PlanHashAnnotation records which plan a pod runs.
	PlanHashAnnotation = "linerate.dev/plan-hash"
)

// Roles of tester pods. One pod drives both ports when they share a node; otherwise the generator pod
// runs the runner and the engine of ports[0], and the receiver pod runs only the engine of ports[1], which
// the runner drives over the pod network.
const (
	RoleTester    = "tester"
	RoleGenerator = "generator"
	RoleReceiver  = "receiver"
)

// Paths inside the tester container.
const (
	PlanDir = "/etc/linerate/plan"
	// PodInfoDir holds the pod's Multus network-status (downward API): which VF each port's attachment got.
	PodInfoDir     = "/etc/linerate/podinfo"
	networkStatus  = "network-status"
	RunDir         = "/run/linerate"
	HugePagesDir   = "/dev/hugepages"
	ReceiverPort   = 7777
	testerBinary   = "/usr/local/bin/linerate"
	containerName  = "tester"
	defaultMemory  = "1Gi"
	defaultHuge    = "1Gi"
	defaultHugeSz  = "2Mi"
	defaultCPUs    = 3
	managedByValue = "linerate"
)

// Options are operator-wide settings for tester pods.
type Options struct {
	// Image is the tester image when the TrafficTest names none.
	Image string
	// ImagePullPolicy of the tester container.
	ImagePullPolicy corev1.PullPolicy
	// ImagePullSecrets name Secrets in each TrafficTest's namespace that a private registry's tester image is
	// pulled with (the manager's --tester-image-pull-secrets).
	ImagePullSecrets []corev1.LocalObjectReference
}

// Labels returns the labels of a TrafficTest's objects.
func Labels(tt *v1alpha1.TrafficTest, role string) map[string]string {
	l := map[string]string{
		LabelName:      "linerate-tester",
		LabelInstance:  tt.Name,
		LabelManagedBy: managedByValue,
		LabelTest:      tt.Name,
	}
	if role != "" {
		l[LabelRole] = role
	}
	return l
}

// ServiceAccountName is the per-test identity of the tester.
func ServiceAccountName(tt *v1alpha1.TrafficTest) string { return tt.Name + "-tester" }

// PodName names a tester pod.
func PodName(tt *v1alpha1.TrafficTest, role string) string {
	if role == RoleTester {
		return tt.Name + "-tester"
	}
	return tt.Name + "-" + role
}

// ReceiverServiceName is the headless Service through which the generator reaches the receiver's engine.
func ReceiverServiceName(tt *v1alpha1.TrafficTest) string { return tt.Name + "-receiver" }

// SplitAcrossNodes says whether the two ports are pinned to different nodes.
func SplitAcrossNodes(p *plan.Plan) bool {
	return p.Ports[0].Node != "" && p.Ports[1].Node != "" && p.Ports[0].Node != p.Ports[1].Node
}

// Pods renders the tester pod(s) of a TrafficTest.
func Pods(tt *v1alpha1.TrafficTest, p *plan.Plan, planHash string, opt Options) ([]*corev1.Pod, error) {
	if !SplitAcrossNodes(p) {
		pod, err := pod(tt, p, planHash, opt, RoleTester, []int{0, 1})
		if err != nil {
			return nil, err
		}
		return []*corev1.Pod{pod}, nil
	}
	gen, err := pod(tt, p, planHash, opt, RoleGenerator, []int{0})
	if err != nil {
		return nil, err
	}
	rcv, err := pod(tt, p, planHash, opt, RoleReceiver, []int{1})
	if err != nil {
		return nil, err
	}
	return []*corev1.Pod{gen, rcv}, nil
}

// windowMemory is what the sequence windows of the streams a pod receives can hold resident: a bit per
// frame of the longest trial at line rate (plan.SeqWindow), rounded up to MiB, for each RX queue of a
// port (engine.WorkerLayout for the pod's CPUs: a queue's window spans the stream's sequence numbers
// whatever share of its flows the queue gets). The engine maps more (a power of two) but only the pages
// of frames that arrive become resident.
func windowMemory(p *plan.Plan, ports []int, cpus int) resource.Quantity {
	_, frames := p.SeqWindow()
	_, queues := engine.WorkerLayout(cpus, len(ports))
	streams := 0
	for _, d := range p.Directions() {
		if slices.Contains(ports, d.RX) {
			streams++
		}
	}
	mib := (int64(streams*queues)*((frames+7)/8) + 1<<20 - 1) >> 20
	return *resource.NewQuantity(mib<<20, resource.BinarySI)
}

// ringMemory is what the rings of the pod's af_packet ports take (engine.AFPacketRingBytes a queue pair, the
// queue pairs engine.WorkerLayout gives the pod's CPUs): locked kernel memory, charged to the pod.
func ringMemory(p *plan.Plan, ports []int, cpus int) resource.Quantity {
	_, queues := engine.WorkerLayout(cpus, len(ports))
	var n int64
	for _, i := range ports {
		if p.Ports[i].Driver == v1alpha1.DriverAFPacket {
			n += int64(queues) * engine.AFPacketRingBytes
		}
	}
	return *resource.NewQuantity(n, resource.BinarySI)
}

func pod(tt *v1alpha1.TrafficTest, p *plan.Plan, planHash string, opt Options, role string, ports []int) (*corev1.Pod, error) {
	ts := &tt.Spec.Tester
	image := ts.Image
	if image == "" {
		image = opt.Image
	}
	if image == "" {
		return nil, fmt.Errorf("spec.tester.image: no image given and the operator has no default tester image")
	}
	cpus := ts.CPUs
	if cpus == 0 {
		cpus = defaultCPUs
	}
	memory := ts.Memory.DeepCopy()
	if memory.IsZero() {
		memory = resource.MustParse(defaultMemory)
	}
	memory.Add(windowMemory(p, ports, int(cpus)))
	memory.Add(ringMemory(p, ports, int(cpus)))
	huge := ts.HugePages
	if huge.IsZero() {
		huge = resource.MustParse(defaultHuge)
	}
	hugeSize := ts.HugePageSize
	if hugeSize == "" {
		hugeSize = defaultHugeSz
	}
	hugeRes := corev1.ResourceName(corev1.ResourceHugePagesPrefix + hugeSize)

	// Guaranteed QoS (requests = limits, whole CPUs) lets the static CPU manager give DPDK's busy-polling
	// lcores dedicated cores; hugepages must have requests = limits anyway.
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(cpus), resource.DecimalSI),
		corev1.ResourceMemory: memory,
		hugeRes:               huge,
	}
	var networks []multusNetwork
	// IPC_LOCK: DPDK locks its hugepage memory. SYS_NICE: the engine's workers sleep when nothing is due and
	// run SCHED_FIFO while they do (dataplane/PROTOCOL.md, Waiting), so that a host busy with the DUT or the
	// cluster wakes them on time; without it they stay ordinary threads, and say so.
	caps := map[corev1.Capability]bool{"IPC_LOCK": true, "SYS_NICE": true}
	for _, i := range ports {
		port := p.Ports[i]
		if port.Resource != "" {
			q := res[corev1.ResourceName(port.Resource)]
			q.Add(resource.MustParse("1"))
			res[corev1.ResourceName(port.Resource)] = q
		}
		if port.Network != "" {
			n := multusNetwork{Name: port.Network, Interface: port.Interface}
			if ns, name, ok := strings.Cut(port.Network, "/"); ok {
				n.Namespace, n.Name = ns, name
			}
			networks = append(networks, n)
		}
		switch port.Driver {
		case v1alpha1.DriverAFPacket:
			// AF_PACKET sockets need NET_RAW; DPDK's port start restores the MAC address and the
			// promiscuous flag with ioctls that need NET_ADMIN (in the pod's own network namespace only).
			caps["NET_RAW"], caps["NET_ADMIN"] = true, true
		case v1alpha1.DriverAFXDP:
			// AF_XDP sockets need NET_RAW; loading the XDP program needs NET_ADMIN and BPF.
			caps["NET_RAW"], caps["NET_ADMIN"], caps["BPF"] = true, true, true
		}
	}
	var capList []corev1.Capability
	for c := range caps {
		capList = append(capList, c)
	}
	sort.Slice(capList, func(i, j int) bool { return capList[i] < capList[j] })

	args := []string{"runner",
		"--plan", PlanDir + "/" + plan.ConfigMapKey,
		"--namespace", tt.Namespace,
		"--results-configmap", results.ConfigMapName(tt.Name),
		"--huge-dir", HugePagesDir,
		"--run-dir", RunDir,
		"--network-status", PodInfoDir + "/" + networkStatus,
	}
	switch role {
	case RoleGenerator:
		args = append(args, "--ports", p.Ports[0].Name,
			"--remote-engine", fmt.Sprintf("%s=tcp:%s.%s.svc:%d", p.Ports[1].Name, ReceiverServiceName(tt), tt.Namespace, ReceiverPort))
	case RoleReceiver:
		args = []string{"engine",
			"--plan", PlanDir + "/" + plan.ConfigMapKey,
			"--ports", p.Ports[1].Name,
			"--listen", fmt.Sprintf(":%d", ReceiverPort),
			"--huge-dir", HugePagesDir,
			"--run-dir", RunDir,
			"--network-status", PodInfoDir + "/" + networkStatus,
		}
	}

	annotations := map[string]string{PlanHashAnnotation: planHash}
	if len(networks) > 0 {
		b, err := json.Marshal(networks)
		if err != nil {
			return nil, err
		}
		annotations[NetworksAnnotation] = string(b)
	}
	nodeSelector := map[string]string{}
	for k, v := range ts.NodeSelector {
		nodeSelector[k] = v
	}
	if node := p.Ports[ports[0]].Node; node != "" {
		nodeSelector[corev1.LabelHostname] = node
	} else if p.DUTPod != nil && role != RoleReceiver {
		// the runner reads the DUT pod's cgroup on that pod's node (spec.dut.cpu.pod)
		nodeSelector[corev1.LabelHostname] = p.DUTPod.Node
	}
	if len(nodeSelector) == 0 {
		nodeSelector = nil
	}
	falseVal, trueVal := false, true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        PodName(tt, role),
			Namespace:   tt.Namespace,
			Labels:      Labels(tt, role),
			Annotations: annotations,
		},
		Spec: corev1.PodSpec{
			// A crashed tester is not restarted: the run fails with the trials measured so far, rather than
			// silently starting over and mixing two runs' results.
			RestartPolicy:                 corev1.RestartPolicyNever,
			ImagePullSecrets:              opt.ImagePullSecrets,
			ServiceAccountName:            ServiceAccountName(tt),
			NodeSelector:                  nodeSelector,
			Tolerations:                   ts.Tolerations,
			TerminationGracePeriodSeconds: ptr(int64(10)),
			EnableServiceLinks:            &falseVal,
			Containers: []corev1.Container{{
				Name:            containerName,
				Image:           image,
				ImagePullPolicy: opt.ImagePullPolicy,
				Command:         []string{testerBinary},
				Args:            args,
				Env: []corev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
				},
				Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9100}},
				Resources: corev1.ResourceRequirements{
					Requests: res,
					Limits:   res.DeepCopy(),
				},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: &falseVal,
					RunAsNonRoot:             &falseVal,
					ReadOnlyRootFilesystem:   &trueVal,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: capList},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "plan", MountPath: PlanDir, ReadOnly: true},
					{Name: "hugepages", MountPath: HugePagesDir},
					{Name: "run", MountPath: RunDir},
					{Name: "podinfo", MountPath: PodInfoDir, ReadOnly: true},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "plan", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: results.PlanConfigMapName(tt.Name)}}}},
				{Name: "hugepages", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
					Medium: corev1.StorageMedium(string(corev1.StorageMediumHugePages) + "-" + hugeSize)}}},
				{Name: "run", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
				{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
					Items: []corev1.DownwardAPIVolumeFile{{Path: networkStatus, FieldRef: &corev1.ObjectFieldSelector{
						FieldPath: "metadata.annotations['" + devices.NetworkStatusAnnotation + "']"}}}}}},
			},
		},
	}
	if tt.Spec.DUT.CPU != nil && role != RoleReceiver {
		// the runner reads the DUT's cgroup on its node (spec.dut.cpu.cgroup)
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "node-cgroup", VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: "/sys/fs/cgroup", Type: ptr(corev1.HostPathDirectory)}}})
		c := &pod.Spec.Containers[0]
		// read-only all the way down: on cgroup v1 each controller is a mount of its own below it
		rro := corev1.RecursiveReadOnlyIfPossible
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "node-cgroup", MountPath: cgroupcpu.NodeMount, ReadOnly: true,
			RecursiveReadOnly: &rro})
	}
	if role == RoleReceiver {
		pod.Spec.Hostname = "engine"
		pod.Spec.Subdomain = ReceiverServiceName(tt)
	}
	return pod, nil
}

// ReceiverService is the headless Service that gives the receiver pod a DNS name.
func ReceiverService(tt *v1alpha1.TrafficTest) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ReceiverServiceName(tt), Namespace: tt.Namespace, Labels: Labels(tt, RoleReceiver)},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{LabelTest: tt.Name, LabelRole: RoleReceiver},
			Ports:     []corev1.ServicePort{{Name: "engine", Port: ReceiverPort}},
		},
	}
}

type multusNetwork struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Interface string `json:"interface,omitempty"`
}

// RBAC renders the tester's ServiceAccount, and a Role that lets it read its plan and write its results —
// those two ConfigMaps by name, nothing else.
func RBAC(tt *v1alpha1.TrafficTest) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	name := ServiceAccountName(tt)
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: tt.Namespace, Labels: Labels(tt, "")}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: meta()}
	role := &rbacv1.Role{ObjectMeta: meta(), Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{results.ConfigMapName(tt.Name)},
			Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{results.PlanConfigMapName(tt.Name)},
			Verbs: []string{"get"}},
		// Sealed segments of the trial records (internal/results/segments.go), made by the operator: create
		// cannot be limited to names, so the runner gets none.
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: results.SegmentConfigMapNames(tt.Name),
			Verbs: []string{"get", "update"}},
	}}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: meta(),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: tt.Namespace}},
	}
	return sa, role, rb
}

func ptr[T any](v T) *T { return &v }
