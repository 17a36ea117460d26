package server

import (
	"net/http"
	"strconv"

	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/storage"
)

// serveEncodedList answers a list by copying the JSON a store keeps of each
// item, when the resource's store can answer lists with its encodings
// (storage.EncodedLister, a cacher with a codec) and they are in the
// format this server writes for the resource (the store's codec is
// CacheCodec of the same group, version and kind). It reports false,
// having written nothing, when the list must go through GetList instead.
func (s *Server) serveEncodedList(w http.ResponseWriter, req *http.Request, t target, p *request.ListParams, opts storage.ListOptions) bool {
	el, ok := t.res.Storage.(storage.EncodedLister)
	if !ok || el.EncodedFormat() != t.res.wire.object {
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
