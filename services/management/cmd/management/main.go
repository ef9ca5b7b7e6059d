// Command management serves the management interface: users and
// permissions, classic and Tyk OAS API definitions, categories, export and
// migration, over gRPC and REST (/api).
package main

import (
	"github.com/gatehouse/gatehouse/pkg/server"
	"github.com/gatehouse/gatehouse/services/management/internal/app"
)

func main() { server.Main("management", app.Defaults, app.Serve) }
