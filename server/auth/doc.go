// Package auth owns who a request is served for and whether it may be:
// users and the Authenticator interface with its bearer-token
// (kube-apiserver's token file) and TLS client-certificate
// implementations, Kubernetes-style request Attributes and the Authorizer
// interface with an example policy (ReadAllWriteGroups), the context that
// carries a request's user, and a self-signed serving certificate for
// tests and demos. The server (package server) calls these; this package
// knows nothing of the server.
package auth
