package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "HTTP listen address")
	dataDir := fs.String("data-dir", "", "embedded etcd data directory (default: a temporary directory)")
	endpoints := fs.String("etcd-endpoints", "", "comma-separated URLs of an existing etcd cluster (no embedded etcd)")
	fs.StringVar(endpoints, "etcd-servers", "", "the same as --etcd-endpoints (kube-apiserver's name)")
	clientURL := fs.String("etcd-client-url", "", "client URL of the embedded etcd (default: a free loopback port)")
	encoded := fs.Bool("cache-encoded", true, "keep cached widgets as the JSON the server writes: lists copy it (no encoding per item), memory about the JSON size; false keeps decoded objects")
	var sec secureFlags
	sec.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	options, caPath, err := sec.serverOptions(*listen)
	if err != nil {
		return err
	}
	etcdTLS, err := sec.etcdTLS()
	if err != nil {
		return err
	}
	if etcdTLS != nil && *endpoints == "" {
		return fmt.Errorf("%w: --etcd-cafile, --etcd-certfile and --etcd-keyfile go with --etcd-endpoints", errUsage)
	}
	cfg := stackConfig{listen: *listen, dataDir: *dataDir, etcdClientURL: *clientURL, serverOptions: options, etcdTLS: etcdTLS,
		cacheEncoded: *encoded}
	if *endpoints != "" {
		if *dataDir != "" || *clientURL != "" {
			return fmt.Errorf("%w: --etcd-endpoints excludes --data-dir and --etcd-client-url", errUsage)
		}
		for _, ep := range strings.Split(*endpoints, ",") {
			if u, err := url.Parse(ep); err != nil || u.Host == "" {
				return fmt.Errorf("%w: bad etcd endpoint %q", errUsage, ep)
			}
			cfg.etcdEndpoints = append(cfg.etcdEndpoints, ep)
		}
	}
	st, err := startStack(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.close()
	if st.etcd != nil {
		fmt.Fprintf(stdout, "embedded etcd: %s (data in %s)\n", st.etcd.Endpoints[0], st.etcd.Dir)
	} else {
		fmt.Fprintf(stdout, "etcd: %s\n", strings.Join(cfg.etcdEndpoints, ","))
	}
	fmt.Fprintf(stdout, "serving %s/%s %s on %s\n", group, version, plural, st.baseURL)
	if caPath != "" {
		fmt.Fprintf(stdout, "clients trust the serving certificate %s (kubectl --certificate-authority=%s)\n", caPath, caPath)
	}
	fmt.Fprintf(stdout, "try: curl -N '%s/apis/%s/%s/namespaces/default/%s?watch=true&allowWatchBookmarks=true'\n",
		st.baseURL, group, version, plural)
	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "shutting down")
		return nil
	case err := <-st.serveDone:
		st.serveDone <- err // let close() see it
		return fmt.Errorf("http server stopped: %v", err)
	}
}
