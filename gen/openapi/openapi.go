// Package openapi embeds the OpenAPI (Swagger 2.0) descriptions that
// protoc-gen-openapiv2 generates for each service's REST facade.
package openapi

import _ "embed"

// Studio describes the studio REST facade.
//
//go:embed files/gatehouse/studio/v1/studio.swagger.json
var Studio []byte

// Portal describes the developer portal REST facade.
//
//go:embed files/gatehouse/portal/v1/portal.swagger.json
var Portal []byte

// Management describes the management REST facade.
//
//go:embed files/gatehouse/management/v1/management.swagger.json
var Management []byte
