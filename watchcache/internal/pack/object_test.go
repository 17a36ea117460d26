package pack

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func mapID(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }

// shape is an object type with every kind of place the packer handles or
// must leave alone.
type shape struct {
	metav1.TypeMeta
	Name     string
	Role     role
	Tags     []string
	Parts    []part
	Owner    *part
	Fixed    [2]string
	Labels   map[string]string
	Selector selector
	Counts   map[string]int
	Raw      []byte
	Any      any
	Next     *shape
	hidden   string
}

type role string

type selector map[string]string

type part struct {
	Image string
	Args  []string
}

func (s *shape) DeepCopyObject() runtime.Object { panic("not used") }

// makeShape returns object i, all of whose strings are new allocations;
// repeat says how many objects in a row share each repeated value.
func makeShape(i int) *shape {
	c := strings.Clone
	s := &shape{
		TypeMeta: metav1.TypeMeta{APIVersion: c("demo/v1"), Kind: c("Shape")},
		Name:     fmt.Sprintf("shape-%06d", i),
		Role:     role(c("worker")),
		Tags:     []string{c("a"), fmt.Sprint("t", i%3)},
		Parts:    []part{{Image: c("registry/image:v1"), Args: []string{c("--flag"), fmt.Sprint("--id=", i)}}},
		Owner:    &part{Image: fmt.Sprint("owner-", i)},
		Fixed:    [2]string{c("x"), fmt.Sprint("y", i)},
		Labels:   map[string]string{c("app"): fmt.Sprint("app-", i%4)},
		Selector: selector{c("zone"): c("z1"), c("uid"): fmt.Sprint("u", i)},
		Counts:   map[string]int{c("n"): i},
		Raw:      []byte(c("raw")),
		Any:      fmt.Sprint("any-", i),
		hidden:   fmt.Sprint("hidden-", i),
	}
	if i%2 == 0 {
		s.Next = &shape{Name: fmt.Sprint("next-", i), Labels: map[string]string{c("app"): c("next")}}
	}
	return s
}

// placeOf returns the node of shape's field name in c's plan.
func placeOf(c *objects, name string) *node {
	f, _ := reflect.TypeFor[shape]().FieldByName(name)
	for _, fn := range c.plans.plan(reflect.TypeFor[shape]()).fields {
		if fn.index == f.Index[0] {
			return fn.node
		}
	}
	return nil
}

func sameString(a, b string) bool { return a == b && unsafe.StringData(a) == unsafe.StringData(b) }

func TestObjectsKeepsValues(t *testing.T) {
	var c objects
	for i := range 2 * sampleSize {
		obj, want := makeShape(i), makeShape(i)
		c.rewrite(obj)
		if !reflect.DeepEqual(obj, want) {
			t.Fatalf("object %d changed:\n%+v\nwant\n%+v", i, obj, want)
		}
	}
}

func TestObjectsSharesRepeatedValues(t *testing.T) {
	var c objects
	objs := make([]*shape, 2*sampleSize)
	for i := range objs {
		objs[i] = makeShape(i)
		c.rewrite(objs[i])
	}
	a, b := objs[len(objs)-4], objs[len(objs)-8]
	for _, pair := range [][2]string{
		{a.Kind, b.Kind}, {string(a.Role), string(b.Role)}, {a.Tags[0], b.Tags[0]},
		{a.Parts[0].Image, b.Parts[0].Image}, {a.Parts[0].Args[0], b.Parts[0].Args[0]}, {a.Fixed[0], b.Fixed[0]},
	} {
		if !sameString(pair[0], pair[1]) {
			t.Errorf("%q is not shared", pair[0])
		}
	}
	if mapID(a.Labels) != mapID(b.Labels) {
		t.Error("equal label maps are not shared")
	}
	if mapID(a.Selector) == mapID(b.Selector) {
		t.Fatal("different maps are shared")
	}
	for k, v := range a.Selector {
		if k == "zone" && !sameString(v, b.Selector["zone"]) {
			t.Error("a map value repeated under its key is not shared")
		}
	}
}

func TestObjectsStopsLookingUpDistinctValues(t *testing.T) {
	var c objects
	objs := make([]*shape, 2*sampleSize)
	for i := range objs {
		objs[i] = makeShape(i)
		c.rewrite(objs[i])
	}
	name := placeOf(&c, "Name")
	if !name.strs.distinct || name.strs.held != nil {
		t.Fatalf("the names' place is not judged distinct: %+v", name.strs)
	}
	if sel := placeOf(&c, "Selector").maps; !sel.distinct || sel.sets != nil {
		t.Fatalf("the selectors' place is not judged distinct")
	}
	if tags := placeOf(&c, "Tags").elem.strs; tags.distinct {
		t.Fatal("the tags' place, with three values, is judged distinct")
	}
}

func TestObjectsTablesAreBounded(t *testing.T) {
	var c objects
	long := strings.Repeat("v", 4<<10)
	for i := range 3 * maxTableEntries {
		// Each value repeats once: the place is worth sharing, and its
		// table must not grow without bound.
		s := makeShape(0)
		s.Role = role(fmt.Sprint(i/2, long))
		c.rewrite(s)
	}
	role := placeOf(&c, "Role").strs
	if role.distinct || len(role.held) > maxTableEntries || c.heldBytes > maxHeldBytes {
		t.Fatalf("table: distinct %v, %d values, %d bytes", role.distinct, len(role.held), c.heldBytes)
	}
}

func TestObjectsRecursiveTypeIsBounded(t *testing.T) {
	var c objects
	deep := &shape{Name: "0"}
	for i := 1; i < 3*maxPlanDepth; i++ {
		deep = &shape{Name: fmt.Sprint(i), Next: deep}
	}
	c.rewrite(deep)
	if c.plans.nodes > maxPlanNodes {
		t.Fatalf("%d nodes planned", c.plans.nodes)
	}
	for i, s := 3*maxPlanDepth-1, deep; s != nil; i, s = i-1, s.Next {
		if s.Name != fmt.Sprint(i) {
			t.Fatalf("name %q at depth %d", s.Name, i)
		}
	}
}
