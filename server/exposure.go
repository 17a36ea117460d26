package server

import (
	"context"
	"fmt"
	"net"

	"github.com/listwatch/listwatch/server/auth"
)

// checkExposure refuses to serve on a listener reachable from other hosts
// (not loopback) without TLS and authentication, or with anonymous access
// that the Authorizer (none allows everything) lets write, unless the
// configuration says so explicitly (AllowInsecureNonLoopback).
func (s *Server) checkExposure(ctx context.Context, l net.Listener) error {
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok || addr.IP.IsLoopback() || s.cfg.AllowInsecureNonLoopback {
		return nil
	}
	if s.cfg.TLS == nil || s.cfg.Authenticator == nil {
		return fmt.Errorf("server: refusing to serve on %s, which is not a loopback address, without TLS and authentication "+
			"(Config.TLS and Config.Authenticator); set Config.AllowInsecureNonLoopback to do so anyway", addr)
	}
	if !s.cfg.AllowAnonymous {
		return nil
	}
	what, err := s.anonymousWrite(ctx)
	if err != nil {
		return fmt.Errorf("server: asking the Authorizer whether anonymous users may write: %w", err)
	}
	if what != "" {
		return fmt.Errorf("server: refusing to serve on %s, which is not a loopback address, with anonymous access "+
			"(Config.AllowAnonymous) when anonymous users may %s; set a Config.Authorizer that denies them "+
			"(such as ReadAllWriteGroups; cacher-demo serve: --write-groups), turn AllowAnonymous off, "+
			"or set Config.AllowInsecureNonLoopback", addr, what)
	}
	return nil
}

// anonymousWrite asks the Authorizer whether the anonymous user may create
// or delete objects of any resource, and returns what it may do ("" if
// nothing). Without an Authorizer everything is allowed.
func (s *Server) anonymousWrite(ctx context.Context) (string, error) {
	anonymous := auth.Anonymous()
	for _, r := range s.cfg.Resources {
		for _, verb := range []string{"create", "delete"} {
			what := fmt.Sprintf("%s %s.%s", verb, r.Plural, r.Group)
			if s.cfg.Authorizer == nil {
				return what, nil
			}
			a := auth.Attributes{User: anonymous, Verb: verb, ResourceRequest: true,
				APIGroup: r.Group, APIVersion: r.Version, Resource: r.Plural}
			if r.Namespaced {
				a.Namespace = "default"
			}
			if verb == "delete" {
				a.Name = "any"
			}
			ok, _, err := s.cfg.Authorizer.Authorize(ctx, a)
			if err != nil {
				return "", err
			}
			if ok {
				return what, nil
			}
		}
	}
	return "", nil
}
