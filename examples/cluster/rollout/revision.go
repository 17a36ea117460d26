package rollout

import (
	"encoding/json"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
)

// TemplateHashLabel is the label that tells the pods of one template from
// another's: the ReplicaSet's selector and pod template carry it.
const TemplateHashLabel = appsv1.DefaultDeploymentUniqueLabelKey

// TemplateHash is a short, DNS-safe hash of a pod template (and of the
// collision count, which a clash of names bumps).
func TemplateHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	b, _ := json.Marshal(t) // a struct of plain fields: cannot fail
	_, _ = h.Write(b)
	if collisionCount != nil {
		_, _ = h.Write([]byte(strconv.Itoa(int(*collisionCount))))
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// EqualTemplates reports whether a ReplicaSet's template is a
// Deployment's, the template-hash label aside.
func EqualTemplates(rsTemplate, dTemplate *corev1.PodTemplateSpec) bool {
	a, b := rsTemplate.DeepCopy(), dTemplate.DeepCopy()
	delete(a.Labels, TemplateHashLabel)
	delete(b.Labels, TemplateHashLabel)
	if len(a.Labels) == 0 {
		a.Labels = nil
	}
	if len(b.Labels) == 0 {
		b.Labels = nil
	}
	return equality.Semantic.DeepEqual(a, b)
}

// Revision is rs's (or a Deployment's) revision annotation, 0 when absent
// or malformed.
func Revision(obj metav1.Object) int64 {
	v, err := strconv.ParseInt(obj.GetAnnotations()[RevisionAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// MaxRevision is the highest revision among rss.
func MaxRevision(rss []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		m = max(m, Revision(rs))
	}
	return m
}

// FindNewReplicaSet returns the ReplicaSet whose template is d's (the
// oldest, if several are), nil when there is none yet.
func FindNewReplicaSet(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	rss = slices.Clone(rss)
	slices.SortFunc(rss, byCreation)
	for _, rs := range rss {
		if EqualTemplates(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// SplitOld returns rss without newRS.
func SplitOld(rss []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	return slices.DeleteFunc(slices.Clone(rss), func(rs *appsv1.ReplicaSet) bool {
		return newRS != nil && rs.UID == newRS.UID && rs.Name == newRS.Name
	})
}

// NewReplicaSet is the ReplicaSet d's current template needs, at revision
// revision with the given replicas: named after d and the template's
// hash, selecting (and labelling its pods) with the hash label, owned by
// d as its controller.
func NewReplicaSet(d *appsv1.Deployment, revision int64, replicaCount int32) *appsv1.ReplicaSet {
	hash := TemplateHash(&d.Spec.Template, d.Status.CollisionCount)
	tmpl := *d.Spec.Template.DeepCopy()
	tmpl.Labels = withLabel(tmpl.Labels, TemplateHashLabel, hash)
	sel := d.Spec.Selector.DeepCopy()
	if sel == nil {
		sel = &metav1.LabelSelector{}
	}
	sel.MatchLabels = withLabel(sel.MatchLabels, TemplateHashLabel, hash)
	yes := true
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: d.Name + "-" + hash, Namespace: d.Namespace, Labels: tmpl.Labels,
			Annotations: maps.Clone(d.Annotations),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name,
				UID: d.UID, Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicaCount, MinReadySeconds: d.Spec.MinReadySeconds,
			Selector: sel, Template: tmpl},
	}
	SetReplicaAnnotations(rs, d, revision)
	return rs
}

// withLabel returns a copy of m with k=v.
func withLabel(m map[string]string, k, v string) map[string]string {
	m = maps.Clone(m)
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// SetReplicaAnnotations records on rs d's spec.replicas, its ceiling
// (spec.replicas + maxSurge) and, when revision is not 0, rs's revision
// (an earlier one it had is kept in the revision history). It reports
// whether anything changed.
func SetReplicaAnnotations(rs *appsv1.ReplicaSet, d *appsv1.Deployment, revision int64) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	before := maps.Clone(rs.Annotations)
	// A ReplicaSet made from d carries d's own annotations; the
	// controller's are its own to set.
	delete(rs.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
	surge, _ := MaxSurge(d)
	rs.Annotations[DesiredReplicasAnnotation] = strconv.Itoa(int(replicas(d.Spec.Replicas)))
	rs.Annotations[MaxReplicasAnnotation] = strconv.Itoa(int(replicas(d.Spec.Replicas) + surge))
	if revision != 0 {
		old := Revision(rs)
		if old != 0 && old != revision {
			hist := rs.Annotations[RevisionHistoryAnnotation]
			if hist != "" {
				hist += ","
			}
			rs.Annotations[RevisionHistoryAnnotation] = hist + strconv.FormatInt(old, 10)
		}
		rs.Annotations[RevisionAnnotation] = strconv.FormatInt(revision, 10)
	}
	return !maps.Equal(before, rs.Annotations)
}

// NextRevision is the revision d's new ReplicaSet must have: its own when
// it already has the highest, else one above every old one (a rollback
// to an old template makes it the newest revision).
func NextRevision(newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) int64 {
	maxOld := MaxRevision(old)
	if newRS != nil && Revision(newRS) > maxOld {
		return Revision(newRS)
	}
	return maxOld + 1
}

// HistoryToDelete returns the old ReplicaSets beyond d's
// revisionHistoryLimit that may go (no replicas wanted or running, not
// being deleted), oldest revision first. d must be Defaulted.
func HistoryToDelete(d *appsv1.Deployment, old []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var idle []*appsv1.ReplicaSet
	for _, rs := range old {
		if replicas(rs.Spec.Replicas) == 0 && rs.Status.Replicas == 0 && rs.DeletionTimestamp == nil &&
			rs.Status.ObservedGeneration >= rs.Generation {
			idle = append(idle, rs)
		}
	}
	excess := len(idle) - int(replicas(d.Spec.RevisionHistoryLimit))
	if excess <= 0 {
		return nil
	}
	slices.SortFunc(idle, func(a, b *appsv1.ReplicaSet) int {
		if ra, rb := Revision(a), Revision(b); ra != rb {
			return int(ra - rb)
		}
		return byCreation(a, b)
	})
	return idle[:excess]
}

// Images lists a template's container images, comma-separated (for
// narration).
func Images(t *corev1.PodTemplateSpec) string {
	var out []string
	for _, c := range t.Spec.Containers {
		out = append(out, c.Image)
	}
	return strings.Join(out, ",")
}
