// Package v1alpha1 contains the linerate.dev/v1alpha1 API: TrafficTest (one RFC 2544 benchmark of a
// device under test) and ImixProfile (a reusable mix of frame sizes).
// +kubebuilder:object:generate=true
// +groupName=linerate.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is group version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "linerate.dev", Version: "v1alpha1"}

	// SchemeBuilder adds this group-version's types to a scheme. (apimachinery's builder, not
	// controller-runtime's deprecated one: an API package should import no more than apimachinery.)
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme

	// knownTypes are the kinds of this group-version, registered by each kind's file.
	knownTypes []runtime.Object
)

// register records a kind and its list for addKnownTypes.
func register(objects ...runtime.Object) { knownTypes = append(knownTypes, objects...) }

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, knownTypes...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
