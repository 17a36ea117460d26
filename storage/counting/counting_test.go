package counting

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// nopStorage answers every call without doing anything.
type nopStorage struct{ storage.Interface }

func (nopStorage) Create(context.Context, string, runtime.Object, runtime.Object, uint64) error {
	return nil
}
func (nopStorage) Get(context.Context, string, storage.GetOptions, runtime.Object) error { return nil }
func (nopStorage) GetList(context.Context, string, storage.ListOptions, runtime.Object) error {
	return nil
}
func (nopStorage) Watch(context.Context, string, storage.ListOptions) (watch.Interface, error) {
	return watch.NewEmptyWatch(), nil
}
func (nopStorage) GetCurrentResourceVersion(context.Context) (uint64, error) { return 1, nil }
func (nopStorage) RequestWatchProgress(context.Context) error                { return nil }

func TestCountsPerMethod(t *testing.T) {
	ctx := context.Background()
	s := New(nopStorage{})
	before := s.Counts()
	_ = s.Create(ctx, "/k", nil, nil, 0)
	_ = s.Get(ctx, "/k", storage.GetOptions{}, nil)
	_ = s.GetList(ctx, "/k", storage.ListOptions{}, nil)
	_ = s.GetList(ctx, "/k", storage.ListOptions{}, nil)
	_, _ = s.Watch(ctx, "/k", storage.ListOptions{})
	_, _ = s.GetCurrentResourceVersion(ctx)
	_ = s.RequestWatchProgress(ctx)
	got := s.Counts().Sub(before)
	want := Counts{Gets: 1, Lists: 2, CurrentRVs: 1, Watches: 1, Creates: 1, Progress: 1}
	if got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	if got.Reads() != 4 || got.Writes() != 1 || got.Requests() != 6 {
		t.Fatalf("Reads %d Writes %d Requests %d, want 4 1 6", got.Reads(), got.Writes(), got.Requests())
	}
}
