package server

import (
	"bufio"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/server/wire"
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
	if err := checkResourceVersionRange(req.Context(), t.res, p.Options.ResourceVersion); err != nil {
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
	table := wantsTable(req.Header.Values("Accept"))
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
		return appendObject(b, &list.Items[i], r)
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

// appendObject appends the encoding of an unstructured object to b,
// filling apiVersion and kind when the stored object lacks them.
func appendObject(b []byte, u *unstructured.Unstructured, r *resource) ([]byte, error) {
	obj := u.Object
	if _, ok := obj["kind"]; !ok || obj["apiVersion"] == nil {
		obj = withTypeMeta(obj, r)
	}
	return wire.AppendJSON(b, obj)
}

// withTypeMeta returns a shallow copy of obj with apiVersion and kind set.
func withTypeMeta(obj map[string]any, r *resource) map[string]any {
	out := make(map[string]any, len(obj)+2)
	for k, v := range obj {
		out[k] = v
	}
	out["apiVersion"] = r.gvString
	out["kind"] = r.Kind
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
