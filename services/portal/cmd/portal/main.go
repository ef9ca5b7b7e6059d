// Command portal serves the developer portal interface: API products, their
// tutorial pages, tags and categories, over gRPC and REST (/portal-api).
package main

import (
	"github.com/gatehouse/gatehouse/pkg/server"
	"github.com/gatehouse/gatehouse/services/portal/internal/app"
)

func main() { server.Main("portal", app.Defaults, app.Serve) }
