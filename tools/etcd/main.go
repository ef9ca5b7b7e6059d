// Command etcd is the etcd server, built from the Go module proxy for the
// multi-process tests and `make contract-etcd` (no system package needed).
// It lives in its own module, outside go.work, so that etcd's server
// dependencies never move the services' dependency versions.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
