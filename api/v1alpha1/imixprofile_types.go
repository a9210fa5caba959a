package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ImixOrder says how the frames of an IMIX follow each other on the wire. The order matters: a schedule
// that ends in a long run of small frames measures a far lower throughput than the same mix interleaved
// (seed 004 saw 3.2x between two testers on one DUT).
// +kubebuilder:validation:Enum=Interleaved;Random
type ImixOrder string

const (
	// ImixOrderInterleaved spreads every size as evenly as possible over the cycle (smooth weighted
	// round robin): the default, and what hardware testers do.
	ImixOrderInterleaved ImixOrder = "Interleaved"
	// ImixOrderRandom shuffles the cycle with a fixed seed: repeatable, but with runs of equal sizes.
	ImixOrderRandom ImixOrder = "Random"
)

// ImixEntry is one frame size of a mix and its weight, counted in frames (not bytes).
type ImixEntry struct {
	// frameSize is the Ethernet frame size in bytes, FCS included (RFC 2544 convention).
	// +kubebuilder:validation:Minimum=64
	// +kubebuilder:validation:Maximum=9216
	// +required
	FrameSize int32 `json:"frameSize"`
	// weight is the relative number of frames of this size.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	// +required
	Weight int32 `json:"weight"`
}

// ImixSpec is a mix of frame sizes.
// +kubebuilder:validation:XValidation:rule="self.entries.all(a, self.entries.exists_one(b, b.frameSize == a.frameSize))",message="entries: each frameSize may appear only once"
type ImixSpec struct {
	// entries are the sizes of the mix with their weights.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +required
	Entries []ImixEntry `json:"entries"`
	// order of the frames within one cycle of the mix.
	// +kubebuilder:default=Interleaved
	// +optional
	Order ImixOrder `json:"order,omitempty"`
	// seed of the Random order.
	// +optional
	Seed int64 `json:"seed,omitempty"`
}

// ImixShare is what one size contributes to a mix.
type ImixShare struct {
	// frameSize is the Ethernet frame size in bytes, FCS included (the RFC 2544 convention).
	// +required
	FrameSize int32 `json:"frameSize"`
	// framesPercent is the share of frames, in percent.
	// +required
	FramesPercent string `json:"framesPercent"`
	// l1BytesPercent is the share of bytes on the wire (frame + 20 B preamble and gap), in percent.
	// +required
	L1BytesPercent string `json:"l1BytesPercent"`
}

// ImixProfileStatus describes the mix as the tester will send it.
type ImixProfileStatus struct {
	// conditions report whether the mix is valid (type Valid), with the reason when it is not.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// averageFrameSize is the mean frame size in bytes (FCS included).
	// +optional
	AverageFrameSize string `json:"averageFrameSize,omitempty"`
	// cycleLength is the number of frames after which the schedule repeats.
	// +optional
	CycleLength int32 `json:"cycleLength,omitempty"`
	// shares is what each frame size contributes to the mix: its share of frames, of L2 bytes and of L1 bytes.
	// +optional
	// +listType=atomic
	Shares []ImixShare `json:"shares,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=imix
// +kubebuilder:printcolumn:name="Sizes",type=integer,JSONPath=`.status.cycleLength`,description="Frames per schedule cycle",priority=1
// +kubebuilder:printcolumn:name="Avg Frame",type=string,JSONPath=`.status.averageFrameSize`
// +kubebuilder:printcolumn:name="Order",type=string,JSONPath=`.spec.order`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ImixProfile is a reusable mix of frame sizes for IMIX throughput tests.
type ImixProfile struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the mix of frame sizes and the order in which they are sent.
	// +required
	Spec ImixSpec `json:"spec"`
	// status is the mix as the tester will send it, computed by the operator.
	// +optional
	Status ImixProfileStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ImixProfileList contains a list of ImixProfile.
type ImixProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ImixProfile `json:"items"`
}

func init() {
	register(&ImixProfile{}, &ImixProfileList{})
}
