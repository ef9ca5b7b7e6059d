// Command studio serves the AI studio interface: LLM settings and studio
// users, over gRPC and REST (/api/v1).
package main

import (
	"github.com/gatehouse/gatehouse/pkg/server"
	"github.com/gatehouse/gatehouse/services/studio/internal/app"
)

func main() { server.Main("studio", app.Defaults, app.Serve) }
