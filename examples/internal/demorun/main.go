package demorun

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// Main is a demo command's main: it adds -serve (described by serveUsage)
// to fs, parses the command line, logs only warnings and errors (the
// narration is the output: the library's own lines, such as the cachers'
// lists, would interleave with it), and calls play until SIGINT or
// SIGTERM; it exits with status 1, naming the command, when play fails.
func Main(fs *flag.FlagSet, serveUsage string, play func(ctx context.Context, serve bool) error) {
	serve := fs.Bool("serve", false, serveUsage)
	_ = fs.Parse(os.Args[1:])
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := play(ctx, *serve)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", fs.Name(), err)
		os.Exit(1)
	}
}
