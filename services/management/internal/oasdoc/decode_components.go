package oasdoc

import "github.com/getkin/kin-openapi/openapi3"

// components reads the Components object. Unlike below Paths, its values
// are decoded from the document's own text.
func (s *scanner) components() (*openapi3.Components, error) {
	c := &openapi3.Components{}
	return c, s.fields(func(key []byte) error {
		switch string(key) {
		case "schemas":
			return decodeField(s, &c.Schemas, s.schemas)
		case "parameters":
			return decodeField(s, &c.Parameters, func() (openapi3.ParametersMap, error) { return entries(s, s.parameterRef) })
		case "headers":
			return decodeField(s, &c.Headers, s.headers)
		case "requestBodies":
			return decodeField(s, &c.RequestBodies, func() (openapi3.RequestBodies, error) { return entries(s, s.requestBodyRef) })
		case "responses":
			return decodeField(s, &c.Responses, func() (openapi3.ResponseBodies, error) { return entries(s, s.newResponseRef) })
		case "securitySchemes":
			return s.delegate(&c.SecuritySchemes)
		case "examples":
			return s.delegate(&c.Examples)
		case "links":
			return s.delegate(&c.Links)
		case "callbacks":
			return s.delegate(&c.Callbacks)
		default:
			return s.extensionOnly(&c.Extensions, key)
		}
	})
}
