// Package httplw is a reflector.ListerWatcher over the Kubernetes-compatible
// HTTP API served by package server (or by any Kubernetes API server for a
// JSON resource), written with plain net/http and no client-go.
//
// List sends GET {BaseURL}/apis/{group}/{version}[/namespaces/{ns}]/{plural}
// with the ListOptions as query parameters and decodes the list (as
// *unstructured.UnstructuredList unless Config.NewListFunc is set). Watch
// sends the same request with watch=true and returns a watch.Interface fed
// by one goroutine that decodes the stream of {"type","object"} frames
// (as *unstructured.Unstructured unless Config.NewFunc is set). Frames are
// read one per line, the object cut out without a second scan; streams
// framed otherwise fall back to encoding/json's Decoder.
//
// Requests go through a package transport Transport (Config.HTTPClient's,
// or one with transport's defaults): a list, each page of it, and each
// watch start take one token of its client-side rate limit, a watch's
// events none; a list answered 429 is sent again after its Retry-After
// within its ctx's deadline, and a watch answered 429 returns the error,
// which the reflector retries after its backoff.
//
// Contract:
//   - A non-2xx answer is returned as the error its metav1.Status body
//     stands for (storage.FromStatus): a *storage.Error for a storage
//     error, so errors.Is(err, storage.ErrGone), ErrNotFound,
//     ErrTooManyRequests, ErrUnavailable, ... work (and so do
//     apimachinery's apierrors.IsResourceExpired, IsNotFound, ...); any
//     other Status (401, 403, ...) as an *apierrors.StatusError.
//   - ERROR events are delivered as watch.Error with the server's
//     *metav1.Status (410 Expired for a compacted resource version);
//     storage.FromStatus turns it into a *storage.Error.
//   - The watch goroutine ends when the stream ends, when ctx is cancelled,
//     or on Stop; it closes the response body and then the result channel.
//     Stop waits for that. A stream that cannot be decoded ends with one
//     watch.Error event carrying a 500 Status; a cut connection simply
//     closes the channel, and the caller re-watches from its last RV.
//
// Example:
//
//	lw, err := httplw.New(httplw.Config{
//		BaseURL: "http://127.0.0.1:8080",
//		Group:   "demo.listwatch.dev", Version: "v1", Plural: "widgets",
//		Namespace: "default",
//	})
//	list, err := lw.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
//	w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
//	defer w.Stop()
//	for ev := range w.ResultChan() { ... }
package httplw
