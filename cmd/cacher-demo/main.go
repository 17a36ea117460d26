// Command cacher-demo shows listwatch's main job on a real etcd.
//
//	cacher-demo                 scripted walkthrough on an embedded etcd (what `make demo` runs)
//	cacher-demo serve [flags]   the Kubernetes-compatible HTTP API over a cacher
//	cacher-demo watch [flags]   an informer over HTTP printing every event with its RV
//
// Errors are one line on stderr and a non-zero exit status.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stderr, "cacher-demo: %v\n", err)
	}
	os.Exit(exitCode(err))
}

// exitCode is the process's exit status for run's error: 0 after -h
// (the help was asked for), 2 for usage errors, 1 for failures.
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	return 1
}

var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return runWalkthrough(ctx, stdout, stderr)
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "watch":
		return runWatch(ctx, args[1:], stdout, stderr)
	case "walkthrough":
		return runWalkthrough(ctx, stdout, stderr)
	case "leader":
		return runLeader(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("%w: unknown command %q (commands: serve, watch, leader; none runs the walkthrough)", errUsage, args[0])
}

const usage = `cacher-demo: listwatch's cacher on a real etcd

  cacher-demo                      scripted walkthrough on an embedded etcd
  cacher-demo serve [flags]        HTTP API over a cacher (see serve -h)
  cacher-demo watch --server URL   informer over HTTP printing events (see watch -h)
  cacher-demo leader --key KEY     who leads a manager's leader election, read from etcd
`

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args, turning flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}
