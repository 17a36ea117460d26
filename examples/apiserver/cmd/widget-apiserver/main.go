// Command widget-apiserver serves widgets.listwatch.dev/v1 Widgets over
// HTTPS (a self-signed certificate; no authentication: a local example),
// stored by listwatch through k8scompat.StorageDecorator, in an embedded
// etcd unless --etcd-servers names one.
//
//	go run ./cmd/widget-apiserver --port 8443
//	kubectl --server https://127.0.0.1:8443 --insecure-skip-tls-verify get widgets -A
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/listwatch/listwatch/examples/apiserver/server"
)

func main() {
	var (
		etcdServers = flag.String("etcd-servers", "", "comma-separated etcd endpoints; empty starts an embedded etcd")
		etcdDir     = flag.String("etcd-dir", "", "data directory of the embedded etcd (default: a temporary one)")
		bind        = flag.String("bind-address", "127.0.0.1", "address to serve HTTPS on")
		port        = flag.Int("port", 8443, "port to serve HTTPS on")
		certDir     = flag.String("cert-dir", "", "directory for the self-signed serving certificate (default: a temporary one)")
		storage     = flag.String("storage", string(server.StorageListwatch), "storage behind the registry: listwatch or kubernetes")
	)
	flag.Parse()
	o := server.Options{
		EtcdDir: *etcdDir, BindAddress: *bind, Port: *port, CertDir: *certDir,
		Storage: server.Storage(*storage),
	}
	if *etcdServers != "" {
		o.EtcdServers = strings.Split(*etcdServers, ",")
	}
	if *certDir == "" {
		dir, err := os.MkdirTemp("", "widget-apiserver-certs")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
		o.CertDir = dir
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		slog.Error("widget-apiserver", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o server.Options) error {
	s, err := server.New(o)
	if err != nil {
		return err
	}
	slog.Info("widget-apiserver serving", "address", fmt.Sprintf("https://%s:%d", o.BindAddress, o.Port), "etcd", s.Endpoints, "storage", o.Storage)
	return s.Run(ctx)
}
