package httplw

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/widget"
)

// BenchmarkWatchDecode measures the client side of a watch: one stream of
// ~1 KiB Widget events (flushed one by one, as a server under light load
// sends them) decoded by httplw, per event.
func BenchmarkWatchDecode(b *testing.B) {
	obj := `{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"annotations":{"bench/padding":"` +
		strings.Repeat("x", 760) + `","bench/ts":"1763820000000000000"},"creationTimestamp":"2026-11-22T13:53:03Z",` +
		`"labels":{"app":"app-1","tier":"tier-0"},"name":"obj-00001","namespace":"bench","resourceVersion":"%d",` +
		`"uid":"00000000-0000-0000-0000-000000000001"},"spec":{"nodeName":"node-1","replicas":0}}`
	const perStream = 1000
	var stream bytes.Buffer
	for i := range perStream {
		fmt.Fprintf(&stream, `{"type":"MODIFIED","object":`+obj+"}\n", i+1)
	}
	lines := bytes.SplitAfter(stream.Bytes(), []byte("\n"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		rc := http.NewResponseController(w)
		for _, l := range lines {
			_, _ = w.Write(l)
			_ = rc.Flush()
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, typed := range []bool{false, true} {
		b.Run(fmt.Sprintf("typed=%v", typed), func(b *testing.B) {
			cfg := Config{BaseURL: srv.URL, Group: "g.io", Version: "v1", Plural: "widgets", HTTPClient: client}
			if typed {
				cfg.NewFunc = widget.New
			}
			lw, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(stream.Len() / perStream))
			events := 0
			for b.Loop() {
				w, err := lw.Watch(b.Context(), metav1.ListOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for range w.ResultChan() {
					events++
				}
				w.Stop()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events)/1000, "µs/event")
		})
	}
}
