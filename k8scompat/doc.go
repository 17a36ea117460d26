// Package k8scompat serves listwatch storage through Kubernetes' own storage
// interface, k8s.io/apiserver/pkg/storage.Interface.
//
// It is a separate Go module so that the listwatch library itself never
// depends on k8s.io/apiserver.
package k8scompat
