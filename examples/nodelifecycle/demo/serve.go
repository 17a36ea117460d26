package demo

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/listwatch/listwatch/examples/internal/demorun"
)

// Serve starts a cluster and keeps it running until ctx ends, narrating
// the controllers' reports to w, for users to watch it with kubectl. It
// reads commands from in, one per line: "stop X" and "resume X", where X
// is a node, a zone or "all", and "status". At the end of in it keeps
// serving.
func Serve(ctx context.Context, w io.Writer, in io.Reader, o Options) error {
	r := newRecorder(w, o.Clock)
	o.OnEvent, o.OnEvict = demorun.Chain(r.onEvent, o.OnEvent), demorun.Chain(r.onEvict, o.OnEvict)
	s, err := Start(ctx, o)
	if err != nil {
		return err
	}
	r.Printf("serving nodes, pods and leases at %s", s.API.URL)
	r.Printf("try: kubectl --server %s get nodes -w", s.API.URL)
	r.Printf("     kubectl --server %s describe node %s", s.API.URL, s.Sim.Nodes()[0])
	r.Printf("     kubectl --server %s get leases -n kube-node-lease", s.API.URL)
	r.Printf("commands: stop|resume <node|zone|all>, status")
	lines := make(chan string)
	go func() { // ends with in; owned by the caller's reader
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			r.Printf("shutting down")
			return s.Close()
		case line := <-lines:
			if msg := command(s, line); msg != "" {
				r.Printf("%s", msg)
			}
		}
	}
}

// command runs one command line and returns what to report.
func command(s *Stack, line string) string {
	f := strings.Fields(line)
	if len(f) == 0 {
		return ""
	}
	if f[0] == "status" {
		var b strings.Builder
		for z, st := range s.Controller.ZoneStates() {
			fmt.Fprintf(&b, "%s: %s at %g/s; ", z, st, s.Controller.ZoneRate(z))
		}
		fmt.Fprintf(&b, "%d evictions pending", s.Taints.Pending())
		return b.String()
	}
	if len(f) != 2 || (f[0] != "stop" && f[0] != "resume") {
		return "usage: stop|resume <node|zone|all>, status"
	}
	nodes := []string{f[1]}
	switch {
	case f[1] == "all":
		nodes = s.Sim.Nodes()
	case strings.HasPrefix(f[1], "zone-"):
		nodes = s.Sim.NodesInZone(f[1])
	}
	change, done := s.Sim.Stop, "stopped"
	if f[0] == "resume" {
		change, done = s.Sim.Resume, "resumed"
	}
	err := change(nodes...)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s: heartbeats of %d nodes %s", f[1], len(nodes), done)
}
