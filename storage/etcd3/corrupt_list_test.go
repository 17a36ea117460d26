package etcd3

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/value"
)

// failingFor is a transformer that fails reads of the keys ending in one
// of its suffixes with the error given for that suffix.
type failingFor map[string]error

func (f failingFor) TransformFromStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, bool, error) {
	for suffix, err := range f {
		if strings.HasSuffix(string(dataCtx.AuthenticatedData()), suffix) {
			return nil, false, err
		}
	}
	return data, false, nil
}

func (failingFor) TransformToStorage(_ context.Context, data []byte, _ value.Context) ([]byte, error) {
	return data, nil
}

// corruptListFixture stores widgets a..e under /widgets/ns/ and makes the
// values of the names in bad undecodable.
func corruptListFixture(t *testing.T, s *Store, bad ...string) {
	t.Helper()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		mustCreate(t, s, "/widgets/ns/"+name, testWidget(name, nil))
	}
	for _, name := range bad {
		ek, _ := s.prepareKey("/widgets/ns/" + name)
		if _, err := etcdServer.Client.Put(testCtx(t), ek, "\x00garbage"); err != nil {
			t.Fatal(err)
		}
	}
}

func listNames(t *testing.T, s *Store) ([]string, error) {
	t.Helper()
	list := &widget.WidgetList{}
	err := s.GetList(testCtx(t), "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, list)
	var names []string
	for _, w := range list.Items {
		names = append(names, w.Name)
	}
	return names, err
}

// TestListCorruptLimit: a list reads past corrupt objects up to
// MaxCorruptObjects, then stops with the keys it met and Kubernetes'
// "too many errors" cause; the items read before stay in the list.
func TestListCorruptLimit(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.MaxCorruptObjects = 2 })
	corruptListFixture(t, s, "b", "c", "d")
	names, err := listNames(t, s)
	var se *storage.Error
	if !errors.As(err, &se) || se.Code != storage.CodeCorruptObj {
		t.Fatalf("list: %v, want a corrupt-object error", err)
	}
	if want := []string{"/widgets/ns/b", "/widgets/ns/c"}; fmt.Sprint(se.CorruptKeys) != fmt.Sprint(want) {
		t.Errorf("CorruptKeys %v, want %v", se.CorruptKeys, want)
	}
	if !errors.Is(se.ListStopped, storage.ErrTooManyCorrupt) {
		t.Errorf("ListStopped %v, want ErrTooManyCorrupt", se.ListStopped)
	}
	st := se.Status()
	if st.Code != 500 || st.Reason != metav1.StatusReasonStoreReadError || st.Details == nil || len(st.Details.Causes) != 3 {
		t.Fatalf("status %+v", st)
	}
	if last := st.Details.Causes[2]; last.Type != metav1.CauseTypeTooMany || last.Message != "too many errors, the list is truncated" {
		t.Errorf("last cause %+v", last)
	}
	if fmt.Sprint(names) != "[a]" {
		t.Errorf("items read before the list stopped: %v, want [a]", names)
	}
}

// TestListCorruptFailFast: with a negative MaxCorruptObjects the list fails
// at its first corrupt object, with that object's own error.
func TestListCorruptFailFast(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.MaxCorruptObjects = -1 })
	corruptListFixture(t, s, "b", "d")
	names, err := listNames(t, s)
	var se *storage.Error
	if !errors.As(err, &se) || se.Code != storage.CodeCorruptObj || se.Key != "/widgets/ns/b" || len(se.CorruptKeys) != 0 {
		t.Fatalf("list: %#v, want the corrupt-object error of /widgets/ns/b alone", err)
	}
	if fmt.Sprint(names) != "[a]" {
		t.Errorf("items read before the list stopped: %v, want [a]", names)
	}
}

// TestTransformerUnavailable: a transformer error marked
// value.ErrUnavailable says nothing about the value. Reads report an
// internal error (not a corrupt object), a list stops there (naming the
// corrupt objects met before), and the unsafe delete of corrupt objects
// refuses the object.
func TestTransformerUnavailable(t *testing.T) {
	down := fmt.Errorf("kms unreachable: %w", value.ErrUnavailable)
	s := newTestStore(t, func(c *Config) { c.Transformer = failingFor{"/ns/d": down} })
	corruptListFixture(t, s, "b")
	ctx := testCtx(t)

	err := s.Get(ctx, "/widgets/ns/d", storage.GetOptions{}, &widget.Widget{})
	if !storage.IsCode(err, storage.CodeInternal) || !errors.Is(err, value.ErrUnavailable) || errors.Is(err, storage.ErrCorruptObj) {
		t.Fatalf("get: %v, want an internal error wrapping value.ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), `unable to transform key "/widgets/ns/d"`) {
		t.Errorf("get error %q does not name the key", err)
	}

	names, err := listNames(t, s)
	var se *storage.Error
	if !errors.As(err, &se) || se.Code != storage.CodeCorruptObj || fmt.Sprint(se.CorruptKeys) != "[/widgets/ns/b]" {
		t.Fatalf("list: %v, want corrupt key b", err)
	}
	if !storage.IsCode(se.ListStopped, storage.CodeInternal) {
		t.Errorf("ListStopped %v, want the internal error of d", se.ListStopped)
	}
	if causes := se.Status().Details.Causes; len(causes) != 2 || causes[1].Type != metav1.CauseTypeUnexpectedServerResponse || causes[1].Field != "" {
		t.Errorf("causes %+v", causes)
	}
	if fmt.Sprint(names) != "[a c]" {
		t.Errorf("items %v, want [a c]", names)
	}

	err = s.Delete(ctx, "/widgets/ns/d", &widget.Widget{}, nil, nil, nil, storage.DeleteOptions{IgnoreStoreReadError: true})
	if err == nil || len(rawGet(t, s, "/widgets/ns/d").Kvs) != 1 {
		t.Fatalf("unsafe delete of an object whose transformer is down: %v; it must be refused", err)
	}
}
