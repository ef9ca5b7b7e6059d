// Package replicas runs the real service binaries as replicas on a real
// 3-member etcd cluster (etcd processes built from tools/etcd) and checks
// CONTRACT §4 across processes: unique ids under concurrent creates through
// every replica, a deleted user's key refused at once on another replica, no
// acknowledged write lost when the etcd leader stops, and 503 "store
// unavailable" during a quorum loss with service resuming by itself.
package replicas
