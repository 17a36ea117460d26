// Package server is a small generic API server built on k8s.io/apiserver
// that serves widgets.listwatch.dev/v1 Widgets, its REST storage listwatch's
// etcd store and cacher through k8scompat.StorageDecorator (or, for
// comparison, Kubernetes' own storage).
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	registryrest "k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/apiserver/apis/widgets"
	widgetsv1 "github.com/listwatch/listwatch/examples/apiserver/apis/widgets/v1"
	"github.com/listwatch/listwatch/examples/apiserver/registry"
)

// Options configure a Server.
type Options struct {
	// EtcdServers are the etcd endpoints; none starts an embedded etcd
	// (in EtcdDir) that lives as long as the server.
	EtcdServers []string
	// EtcdDir is the embedded etcd's data directory; "" means a temporary
	// one removed when the server stops.
	EtcdDir string
	// Listener serves HTTPS; nil listens on BindAddress:Port.
	Listener net.Listener
	// BindAddress and Port are where the server listens without a
	// Listener ("" means 127.0.0.1; Port 0 means 8443).
	BindAddress string
	Port        int
	// CertDir keeps the self-signed serving certificate; "" means a
	// temporary directory.
	CertDir string
	// Storage is the storage behind the registry: StorageListwatch ("")
	// or StorageKubernetes.
	Storage Storage
	// Logger receives the storage's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Server is the widget API server, ready to Run.
type Server struct {
	generic  *genericapiserver.GenericAPIServer
	loopback *rest.Config
	etcd     *embedtest.Server // the embedded etcd, or nil
	client   *clientv3.Client
	// Endpoints are the etcd endpoints the server stores widgets in.
	Endpoints []string
}

// New builds the server (and starts the embedded etcd, when it has one).
// Authentication and authorization are off: every request is served as
// the anonymous user, which makes this a local example, not a server to
// expose.
func New(o Options) (s *Server, err error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s = &Server{Endpoints: o.EtcdServers}
	defer func() {
		if err != nil {
			s.closeEtcd()
		}
	}()
	if len(s.Endpoints) == 0 {
		s.etcd, err = embedtest.StartServer(embedtest.Options{Dir: o.EtcdDir})
		if err != nil {
			return nil, fmt.Errorf("starting the embedded etcd: %w", err)
		}
		s.Endpoints = s.etcd.Endpoints
	}
	s.client, err = clientv3.New(clientv3.Config{Endpoints: s.Endpoints, DialTimeout: 10 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %v: %w", s.Endpoints, err)
	}

	cfg := genericapiserver.NewConfig(Codecs)
	cfg.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	// /version answers a semantic version kubectl version can parse (an
	// unstamped build says v0.0.0-master+$Format:%H$, and kubectl version
	// exits 1 on it).
	info := versionInfo(cfg.EffectiveVersion.Info())
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		return withVersion(genericapiserver.DefaultBuildHandlerChain(h, c), info)
	}
	if err := applyServing(o, cfg); err != nil {
		return nil, err
	}
	cfg.Authentication.Authenticator = anonymous.NewAuthenticator(nil)
	cfg.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	genericapiserver.AuthorizeClientBearerToken(cfg.LoopbackClientConfig, &cfg.Authentication, &cfg.Authorization)
	namer := openapinamer.NewDefinitionNamer(Scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(widgetsv1.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title, cfg.OpenAPIConfig.Info.Version = "widgets", "v1"
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(widgetsv1.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title, cfg.OpenAPIV3Config.Info.Version = "widgets", "v1"
	s.loopback = cfg.LoopbackClientConfig

	getter, err := newRESTOptionsGetter(o.Storage, s.client, s.Endpoints, o.Logger)
	if err != nil {
		return nil, err
	}
	s.generic, err = cfg.Complete(nil).New("widget-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	widgetREST, err := registry.NewREST(Scheme, getter)
	if err != nil {
		return nil, err
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(widgets.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	group.VersionedResourcesStorageMap[widgetsv1.SchemeGroupVersion.Version] = map[string]registryrest.Storage{"widgets": widgetREST}
	if err := s.generic.InstallAPIGroup(&group); err != nil {
		return nil, err
	}
	return s, nil
}

// applyServing sets up HTTPS with a self-signed certificate for localhost.
func applyServing(o Options, cfg *genericapiserver.Config) error {
	secure := genericoptions.NewSecureServingOptions().WithLoopback()
	secure.Listener = o.Listener
	secure.BindAddress = net.ParseIP("127.0.0.1")
	if o.BindAddress != "" {
		secure.BindAddress = net.ParseIP(o.BindAddress)
	}
	secure.BindPort = o.Port
	if secure.BindPort == 0 {
		secure.BindPort = 8443
	}
	if o.Listener != nil {
		_, port, err := net.SplitHostPort(o.Listener.Addr().String())
		if err != nil {
			return err
		}
		secure.BindPort, _ = strconv.Atoi(port)
	}
	secure.ServerCert.CertDirectory = o.CertDir
	if err := secure.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return fmt.Errorf("self-signed certificate: %w", err)
	}
	return secure.ApplyTo(&cfg.SecureServing, &cfg.LoopbackClientConfig)
}

// LoopbackConfig is a client config for the server (its self-signed
// certificate trusted, a token the server accepts).
func (s *Server) LoopbackConfig() *rest.Config { return rest.CopyConfig(s.loopback) }

// Run serves until ctx ends, then shuts the server down (its storage
// included) and stops the embedded etcd.
func (s *Server) Run(ctx context.Context) error {
	defer s.closeEtcd()
	err := s.generic.PrepareRun().RunWithContext(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

func (s *Server) closeEtcd() {
	if s.client != nil {
		s.client.Close()
	}
	if s.etcd != nil {
		s.etcd.Close()
	}
}

// versionInfo is info with the Kubernetes version of the k8s.io/apiserver
// this binary is built with (v0.37.2 is Kubernetes v1.37.2) when info's
// own GitVersion is an unstamped build's.
func versionInfo(info *apimachineryversion.Info) apimachineryversion.Info {
	out := *info
	if _, err := utilversion.ParseSemantic(out.GitVersion); err == nil && !strings.HasPrefix(out.GitVersion, "v0.0.0") {
		return out
	}
	out.GitVersion = "v1.37.0"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path != "k8s.io/apiserver" {
				continue
			}
			if v, err := utilversion.ParseSemantic(m.Version); err == nil && v.Major() == 0 {
				out.GitVersion = fmt.Sprintf("v1.%d.%d", v.Minor(), v.Patch())
			}
		}
	}
	v := utilversion.MustParseSemantic(out.GitVersion)
	out.Major, out.Minor = "1", strconv.Itoa(int(v.Minor()))
	out.GitCommit, out.GitTreeState = "", ""
	return out
}

// withVersion answers GET /version with info, the rest with h.
func withVersion(h http.Handler, info apimachineryversion.Info) http.Handler {
	body, _ := json.Marshal(info)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/version" || req.Method != http.MethodGet {
			h.ServeHTTP(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
