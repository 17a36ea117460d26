package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/server/schema"
	"github.com/listwatch/listwatch/server/wire"
	"github.com/listwatch/listwatch/storage"
)

// listFlushBytes is the size of the buffer between the list encoder and the
// connection.
const listFlushBytes = 64 << 10

// serveList answers GET on a collection: a list, or a watch with watch=true.
func (s *Server) serveList(w http.ResponseWriter, req *http.Request, t target) {
	p, err := request.ParseList(req.URL.Query(), t.res.fields, t.res.GetAttrs)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	if p.Watch {
		s.serveWatch(w, req, t, p)
		return
	}
	if err := t.res.Storage.ReadinessCheck(); err != nil {
		s.writeError(w, req, err)
		return
	}
	opts := p.Options
	table := schema.WantsTable(req.Header.Values("Accept"))
	if !table && s.serveEncodedList(w, req, t, p, opts) {
		return
	}
	list := &unstructured.UnstructuredList{}
	if err := t.res.Storage.GetList(req.Context(), t.collectionKey(), opts, list); err != nil {
		s.writeError(w, req, err)
		return
	}
	if p.Options.Predicate.Shard != nil {
		// Kubernetes echoes the applied shard selector: the list is a subset.
		md, _ := list.Object["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			list.Object["metadata"] = md
		}
		md["shardInfo"] = map[string]any{"selector": p.ShardExpr}
	}
	if table {
		md, _ := list.Object["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
		}
		s.writeTable(w, req, t.res, list.Items, md)
		return
	}
	s.writeList(w, req, t.res, list)
}

// writeList streams list as {"apiVersion","kind","metadata","items":[...]}
// without building the whole body in memory. The metadata and the first
// item are encoded before anything is written, so the only failures that
// can interrupt a started body are connection errors or an item that
// cannot be encoded (impossible for objects decoded from JSON); the
// connection is then aborted so the client sees a truncated response,
// never a well-formed short list.
func (s *Server) writeList(w http.ResponseWriter, req *http.Request, r *resource, list *unstructured.UnstructuredList) {
	s.streamList(w, req, r, list.Object["metadata"], len(list.Items), func(b []byte, i int) ([]byte, error) {
		return r.wire.AppendObject(b, &list.Items[i])
	})
}

// streamList writes a list of n items whose metadata is meta (an
// unstructured value) and whose i-th item item appends to b.
func (s *Server) streamList(w http.ResponseWriter, req *http.Request, r *resource, metadata any, n int, item func(b []byte, i int) ([]byte, error)) {
	meta, err := wire.AppendJSON(nil, withoutEmptyContinue(metadata))
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	if string(meta) == "null" {
		meta = []byte("{}")
	}
	var first []byte
	if n > 0 {
		if first, err = item(nil, 0); err != nil {
			s.writeError(w, req, err)
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	bw := bufio.NewWriterSize(deadlineWriter{w: w, rc: rc, dl: &deadline{timeout: s.cfg.WriteTimeout}}, listFlushBytes)
	bw.WriteString(`{"apiVersion":`)
	bw.Write(wire.AppendString(nil, r.gvString))
	bw.WriteString(`,"kind":`)
	bw.Write(wire.AppendString(nil, r.listKind))
	bw.WriteString(`,"metadata":`)
	bw.Write(meta)
	bw.WriteString(`,"items":[`)
	scratch := first
	for i := range n {
		if i > 0 {
			if scratch, err = item(scratch[:0], i); err != nil {
				s.log.Error("list item cannot be encoded; aborting response", "err", err)
				panic(http.ErrAbortHandler)
			}
			bw.WriteByte(',')
		}
		bw.Write(scratch)
	}
	bw.WriteString("]}\n")
	if err := bw.Flush(); err != nil {
		s.log.Debug("list response not delivered", "err", err)
	}
}

// withoutEmptyContinue returns list metadata without a "continue" that is
// empty: Kubernetes omits it (omitempty) on a list's last page.
func withoutEmptyContinue(metadata any) any {
	md, ok := metadata.(map[string]any)
	if !ok {
		return metadata
	}
	if c, has := md["continue"]; !has || c != "" {
		return md
	}
	out := make(map[string]any, len(md))
	for k, v := range md {
		if k != "continue" {
			out[k] = v
		}
	}
	return out
}

// deadlineWriter keeps the connection's write deadline WriteTimeout ahead
// of each write, so a client that stops reading a long list is cut off
// instead of pinning the list in memory.
type deadlineWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	dl *deadline
}

func (d deadlineWriter) Write(p []byte) (int, error) {
	d.dl.extend(d.rc)
	return d.w.Write(p)
}

// tableWatchEncoder returns, when req asks for a Table, the encoder of a
// watch whose objects are each a Table of one row (with the column
// definitions, so every event stands alone); bookmarks and errors are sent
// as in any watch. It returns nil for other watches.
func (s *Server) tableWatchEncoder(req *http.Request, r *resource) (func(watch.Event) ([]byte, error), error) {
	if !schema.WantsTable(req.Header.Values("Accept")) {
		return nil, nil
	}
	include, err := schema.IncludeObject(req)
	if err != nil {
		return nil, err
	}
	return func(ev watch.Event) ([]byte, error) {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || ev.Type == watch.Bookmark || ev.Type == watch.Error {
			return r.wire.EncodeEvent(ev)
		}
		t, err := r.Table([]unstructured.Unstructured{*u}, map[string]any{"resourceVersion": u.GetResourceVersion()}, include, time.Now())
		if err != nil {
			return nil, err
		}
		return r.wire.EncodeEvent(watch.Event{Type: ev.Type, Object: t})
	}, nil
}

// writeTable writes objs as a Table.
func (s *Server) writeTable(w http.ResponseWriter, req *http.Request, r *resource, objs []unstructured.Unstructured, listMeta map[string]any) {
	include, err := schema.IncludeObject(req)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	t, err := r.Table(objs, listMeta, include, time.Now())
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	body, err := json.Marshal(t)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", schema.TableMediaType)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
}

// serveEncodedList answers a list by copying the JSON a store keeps of each
// item, when the resource's store can answer lists with its encodings
// (storage.EncodedLister, a cacher with a codec) and they are in the
// format this server writes for the resource (the store's codec is
// CacheCodec of the same group, version and kind). It reports false,
// having written nothing, when the list must go through GetList instead.
func (s *Server) serveEncodedList(w http.ResponseWriter, req *http.Request, t target, p *request.ListParams, opts storage.ListOptions) bool {
	el, ok := t.res.Storage.(storage.EncodedLister)
	if !ok || el.EncodedFormat() != t.res.wire.ObjectFormat() {
		return false
	}
	list, ok, err := el.GetListEncoded(req.Context(), t.collectionKey(), opts)
	if !ok {
		return false
	}
	if err != nil {
		s.writeError(w, req, err)
		return true
	}
	// As GetList's metadata reads after UpdateList; streamList drops an
	// empty continue.
	md := map[string]any{"resourceVersion": strconv.FormatUint(list.ResourceVersion, 10), "continue": list.Continue}
	if list.RemainingItemCount != nil {
		md["remainingItemCount"] = *list.RemainingItemCount
	}
	if p.Options.Predicate.Shard != nil {
		md["shardInfo"] = map[string]any{"selector": p.ShardExpr}
	}
	s.streamList(w, req, t.res, md, len(list.Items), func(b []byte, i int) ([]byte, error) {
		return append(b, list.Items[i]...), nil
	})
	return true
}
