package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// change is one write the walkthrough made, as a watcher should see it.
type change struct {
	Type watch.EventType
	Name string
	RV   string
}

func (c change) String() string { return fmt.Sprintf("%-8s %-10s rv=%s", c.Type, c.Name, c.RV) }

// changeOf describes a watch event as a change.
func changeOf(ev watch.Event) (change, error) {
	if ev.Type == watch.Error {
		if st, ok := ev.Object.(*metav1.Status); ok {
			return change{}, fmt.Errorf("ERROR event: %d %s: %s", st.Code, st.Reason, st.Message)
		}
		return change{}, fmt.Errorf("ERROR event: %v", ev.Object)
	}
	acc, err := meta.Accessor(ev.Object)
	if err != nil {
		return change{}, err
	}
	return change{Type: ev.Type, Name: acc.GetName(), RV: acc.GetResourceVersion()}, nil
}

var errWatchClosed = errors.New("watch closed")

// nextEvent waits for the next event of w, up to timeout.
func nextEvent(w watch.Interface, timeout time.Duration) (watch.Event, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			return watch.Event{}, errWatchClosed
		}
		return ev, nil
	case <-t.C:
		return watch.Event{}, fmt.Errorf("no event within %v", timeout)
	}
}

// collect reads n non-bookmark events from w and compares them with want.
func collect(w watch.Interface, want []change, timeout time.Duration, each func(change)) error {
	var got []change
	for len(got) < len(want) {
		ev, err := nextEvent(w, timeout)
		if err != nil {
			return fmt.Errorf("after %d of %d events: %w", len(got), len(want), err)
		}
		if ev.Type == watch.Bookmark {
			continue
		}
		c, err := changeOf(ev)
		if err != nil {
			return err
		}
		each(c)
		got = append(got, c)
	}
	for i := range want {
		if got[i] != want[i] {
			return fmt.Errorf("event %d is %v, want %v\n got:  %s\n want: %s", i, got[i], want[i], join(got), join(want))
		}
	}
	return nil
}

func join(cs []change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}
