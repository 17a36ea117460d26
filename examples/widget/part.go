package widget

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// PartKind is Part's kind.
const PartKind = "Part"

// Part is a second, smaller example kind: a piece of a Widget, which a
// Widget controller creates and owns (metadata.ownerReferences), as a
// ReplicaSet owns Pods.
type Part struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec PartSpec `json:"spec,omitempty"`
}

// PartSpec is the desired state of a Part.
type PartSpec struct {
	// Color is copied from the owning Widget.
	Color string `json:"color,omitempty"`
}

// PartList is a list of Parts.
type PartList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Parts.
	Items []Part `json:"items"`
}

// DeepCopyInto copies in into out; in must be non-nil.
func (in *Part) DeepCopyInto(out *Part) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopy returns a deep copy of in, or nil for nil.
func (in *Part) DeepCopy() *Part {
	if in == nil {
		return nil
	}
	out := new(Part)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *Part) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies in into out; in must be non-nil.
func (in *PartList) DeepCopyInto(out *PartList) {
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Part, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a deep copy of in, or nil for nil.
func (in *PartList) DeepCopy() *PartList {
	if in == nil {
		return nil
	}
	out := new(PartList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *PartList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}
