// Package deploy holds Gatehouse's Kubernetes manifests (kustomize base and
// overlays) and the container image definition. The Go code here is only tests:
// they render every kustomization in-process, strict-decode each object and check
// the deployment rules written in README.md, and they build the service binaries
// the way the Dockerfile does to prove what the images contain.
package deploy
