package demo

import (
	"context"
	"fmt"
	"io"
)

// Serve starts a cluster and keeps it running until ctx ends, for users
// to drive it with kubectl; it prints where and how to w.
func Serve(ctx context.Context, w io.Writer, o Options) error {
	s, err := Start(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "serving deployments, replicasets, pods, nodes and leases at %s (%s leads the controller manager)\n",
		s.API.URL, s.Replicas[s.Leader()].Name)
	fmt.Fprintf(w, "try: kubectl -s %s create deployment web --image=nginx --replicas=10\n", s.API.URL)
	fmt.Fprintf(w, "     kubectl -s %s rollout status deployment/web\n", s.API.URL)
	fmt.Fprintf(w, "     kubectl -s %s get deployments,replicasets,pods -o wide\n", s.API.URL)
	<-ctx.Done()
	fmt.Fprintln(w, "shutting down")
	return s.Close()
}
