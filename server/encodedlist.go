package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// encodedLister is a store that can answer lists with the encodings it
// keeps (a cacher with a Codec).
type encodedLister interface {
	Codec() watchcache.Codec
	GetListEncoded(ctx context.Context, key string, opts storage.ListOptions) (storage.EncodedList, bool, error)
}

// serveEncodedList answers a list by copying the JSON a cache keeps of each
// item, when the resource's store is such a cache and keeps the JSON this
// server writes (CacheCodec of the same resource). It reports false, having
// written nothing, when the list must go through GetList instead.
func (s *Server) serveEncodedList(w http.ResponseWriter, req *http.Request, t target, p *listParams, opts storage.ListOptions) bool {
	el, ok := t.res.Storage.(encodedLister)
	if !ok {
		return false
	}
	if cc, ok := el.Codec().(*cacheCodec); !ok || !cc.servesAs(t.res) {
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
	if p.shard != nil {
		md["shardInfo"] = map[string]any{"selector": p.shardExpr}
	}
	s.streamList(w, req, t.res, md, len(list.Items), func(b []byte, i int) ([]byte, error) {
		return append(b, list.Items[i]...), nil
	})
	return true
}
