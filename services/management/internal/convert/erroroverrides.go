package convert

import (
	json "github.com/goccy/go-json"
)

// error_overrides → x-tyk-api-gateway.errorOverrides (Tyk's apidef/oas/error_overrides.go, from v5.13): the
// same rules keyed by the same status codes ("500", "4xx"), the names in camelCase. A gateway that knows
// error overrides compiles the rules of both forms with the same code (invalid patterns and templates are
// skipped in both); one that does not (v5.11) ignores the classic field and the OAS member alike, so the
// migrated API answers as the classic one either way. Like Tyk, the block is written for every document of
// the API (children share API-level settings), and with error_overrides_disabled it is kept, disabled.

type xErrorOverrides struct {
	Enabled bool                        `json:"enabled"`
	Value   map[string][]xErrorOverride `json:"value,omitempty"`
}

type xErrorOverride struct {
	Match    *xErrorMatcher `json:"match,omitempty"`
	Response xErrorResponse `json:"response"`
}

type xErrorMatcher struct {
	Flag           string `json:"flag,omitempty"`
	MessagePattern string `json:"messagePattern,omitempty"`
	BodyField      string `json:"bodyField,omitempty"`
	BodyValue      string `json:"bodyValue,omitempty"`
}

type xErrorResponse struct {
	StatusCode int               `json:"statusCode"`
	Body       string            `json:"body,omitempty"`
	Message    string            `json:"message,omitempty"`
	Template   string            `json:"template,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
}

// classicErrorOverride is one rule of the classic error_overrides map.
type classicErrorOverride struct {
	Match *struct {
		Flag           string `json:"flag"`
		MessagePattern string `json:"message_pattern"`
		BodyField      string `json:"body_field"`
		BodyValue      string `json:"body_value"`
	} `json:"match"`
	Response struct {
		StatusCode int               `json:"status_code"`
		Body       string            `json:"body"`
		Message    string            `json:"message"`
		Template   string            `json:"template"`
		Headers    map[string]string `json:"headers"`
	} `json:"response"`
}

// errorOverrides converts the API's error_overrides once; nil when it has none.
func (c *converter) errorOverrides() *xErrorOverrides {
	if c.shared.errorOverridesDone {
		return c.shared.errorOverrides
	}
	c.shared.errorOverridesDone = true
	if !inUse(c.api.ErrorOverrides) {
		return nil
	}
	var in map[string][]classicErrorOverride
	if err := json.Unmarshal(c.api.ErrorOverrides, &in); err != nil {
		c.fail("error_overrides: not a map of status codes to lists of rules: %v", err)
		return nil
	}
	out := &xErrorOverrides{Enabled: !c.api.ErrorOverridesDisabled, Value: make(map[string][]xErrorOverride, len(in))}
	for code, rules := range in {
		conv := make([]xErrorOverride, len(rules))
		for i, r := range rules {
			if r.Match != nil {
				conv[i].Match = &xErrorMatcher{Flag: r.Match.Flag, MessagePattern: r.Match.MessagePattern,
					BodyField: r.Match.BodyField, BodyValue: r.Match.BodyValue}
			}
			conv[i].Response = xErrorResponse{StatusCode: r.Response.StatusCode, Body: r.Response.Body,
				Message: r.Response.Message, Template: r.Response.Template, Headers: r.Response.Headers}
		}
		out.Value[code] = conv
	}
	c.shared.errorOverrides = out
	return out
}

// errorOverridesToClassic is the other direction (ToClassic).
func errorOverridesToClassic(api *classicAPI, x *xErrorOverrides) {
	if x == nil {
		return
	}
	api.ErrorOverridesDisabled = !x.Enabled
	in := make(map[string][]classicErrorOverride, len(x.Value))
	for code, rules := range x.Value {
		conv := make([]classicErrorOverride, len(rules))
		for i, r := range rules {
			if m := r.Match; m != nil {
				conv[i].Match = &struct {
					Flag           string `json:"flag"`
					MessagePattern string `json:"message_pattern"`
					BodyField      string `json:"body_field"`
					BodyValue      string `json:"body_value"`
				}{m.Flag, m.MessagePattern, m.BodyField, m.BodyValue}
			}
			resp := &conv[i].Response
			resp.StatusCode, resp.Body, resp.Message, resp.Template, resp.Headers = r.Response.StatusCode, r.Response.Body, r.Response.Message, r.Response.Template, r.Response.Headers
		}
		in[code] = conv
	}
	api.ErrorOverrides, _ = json.Marshal(in) // strings, numbers and maps of strings: cannot fail
}
