package convert

import (
	"fmt"
	"slices"
)

// x-tyk-api-gateway.server: how clients reach the API. Authentication is filled by security.go.

type xServer struct {
	ListenPath           xListenPath          `json:"listenPath"`
	Slug                 string               `json:"slug,omitempty"`
	Authentication       *xAuthentication     `json:"authentication,omitempty"`
	ClientCertificates   *xClientCertificates `json:"clientCertificates,omitempty"`
	GatewayTags          *xGatewayTags        `json:"gatewayTags,omitempty"`
	CustomDomain         *xCustomDomain       `json:"customDomain,omitempty"`
	DetailedActivityLogs *xEnabled            `json:"detailedActivityLogs,omitempty"`
	DetailedTracing      *xEnabled            `json:"detailedTracing,omitempty"`
	EventHandlers        []xEventHandler      `json:"eventHandlers,omitempty"`
	IPAccessControl      *xIPAccessControl    `json:"ipAccessControl,omitempty"`
	BatchProcessing      *xEnabled            `json:"batchProcessing,omitempty"`
	Protocol             string               `json:"protocol,omitempty"`
	Port                 int                  `json:"port,omitempty"`
}

type xListenPath struct {
	Value string `json:"value"`
	Strip bool   `json:"strip,omitempty"`
}

type xClientCertificates struct {
	Enabled   bool     `json:"enabled"`
	Allowlist []string `json:"allowlist,omitempty"`
}

type xGatewayTags struct {
	Enabled bool     `json:"enabled"`
	Tags    []string `json:"tags"`
}

type xCustomDomain struct {
	Enabled      bool     `json:"enabled"`
	Name         string   `json:"name"`
	Certificates []string `json:"certificates,omitempty"`
}

// xEventHandler is a webhook, a JSVM (custom) or a log event handler.
type xEventHandler struct {
	Enabled        bool      `json:"enabled"`
	Trigger        string    `json:"trigger"`
	Type           string    `json:"type"`
	ID             string    `json:"id,omitempty"`
	Name           string    `json:"name"`
	URL            string    `json:"url,omitempty"`
	Method         string    `json:"method,omitempty"`
	Headers        []xHeader `json:"headers,omitempty"`
	BodyTemplate   *string   `json:"bodyTemplate,omitempty"`
	CooldownPeriod string    `json:"cooldownPeriod,omitempty"`
	FunctionName   string    `json:"functionName,omitempty"`
	Path           *string   `json:"path,omitempty"`
	LogPrefix      *string   `json:"logPrefix,omitempty"`
}

type xIPAccessControl struct {
	Enabled bool     `json:"enabled"`
	Allow   []string `json:"allow,omitempty"`
	Block   []string `json:"block,omitempty"`
}

func (c *converter) server(t *target) xServer {
	if c.shared.server == nil {
		s := c.sharedServer()
		c.shared.server = &s
	}
	s := *c.shared.server
	s.ListenPath = xListenPath{Value: t.listenPath, Strip: c.api.Proxy.StripListenPath}
	return s
}

// sharedServer is the server part of every document but its listen path.
func (c *converter) sharedServer() xServer {
	api := c.api
	s := xServer{
		Slug:            api.Slug,
		EventHandlers:   c.eventHandlers(),
		IPAccessControl: c.ipAccessControl(),
		Port:            api.ListenPort,
	}
	switch api.Protocol {
	case "", "http", "https", "h2c":
		s.Protocol = api.Protocol
	default:
		c.fail("protocol: %q is not one of http, https, h2c", api.Protocol)
	}
	if api.ListenPort < 0 || api.ListenPort > 65535 {
		c.fail("listen_port: %d is not a port", api.ListenPort)
	}
	if api.UseMutualTLSAuth || len(api.ClientCertificates) > 0 {
		s.ClientCertificates = &xClientCertificates{Enabled: api.UseMutualTLSAuth, Allowlist: api.ClientCertificates}
	}
	if len(api.Tags) > 0 {
		// the classic order, without duplicates (the schema wants unique tags)
		ordered := make([]string, 0, len(api.Tags))
		for _, tag := range api.Tags {
			if !slices.Contains(ordered, tag) {
				ordered = append(ordered, tag)
			}
		}
		s.GatewayTags = &xGatewayTags{Enabled: !api.TagsDisabled, Tags: ordered}
	}
	if api.Domain != "" || len(api.Certificates) > 0 {
		// The gateway serves an API's certificates with or without a custom domain; an empty name keeps that.
		s.CustomDomain = &xCustomDomain{Enabled: !api.DomainDisabled, Name: api.Domain, Certificates: api.Certificates}
	}
	if api.EnableDetailedRecording {
		s.DetailedActivityLogs = &xEnabled{Enabled: true}
	}
	if api.DetailedTracing {
		s.DetailedTracing = &xEnabled{Enabled: true}
	}
	if api.EnableBatchRequestSupport {
		s.BatchProcessing = &xEnabled{Enabled: true}
	}
	s.Authentication = c.authentication()
	return s
}

// eventTriggers are the events Tyk OAS event handlers accept.
var eventTriggers = []string{"QuotaExceeded", "RatelimitExceeded", "RateLimitSmoothingUp", "RateLimitSmoothingDown",
	"AuthFailure", "UpstreamOAuthError", "KeyExpired", "VersionFailure", "OrgQuotaExceeded", "OrgRateLimitExceeded",
	"TriggerExceeded", "BreakerTriggered", "BreakerTripped", "BreakerReset", "HostDown", "HostUp", "TokenCreated",
	"TokenUpdated", "TokenDeleted", "CertificateExpiringSoon", "CertificateExpired"}

var webhookMethods = []string{"GET", "PUT", "POST", "DELETE", "PATCH"}

// eventHandlers converts webhook, JSVM and log handlers; Tyk drops every other kind, so they fail here.
func (c *converter) eventHandlers() []xEventHandler {
	var out []xEventHandler
	events := c.api.EventHandlers.Events
	for _, evt := range sortedKeys(events) {
		for i, h := range events[evt] {
			at := fmt.Sprintf("event_handlers.events.%s[%d]", evt, i)
			if !slices.Contains(eventTriggers, evt) {
				c.fail("%s: event %q cannot trigger a Tyk OAS event handler", at, evt)
				continue
			}
			meta := metaReader{m: h.HandlerMeta}
			e := xEventHandler{Enabled: !meta.bool("disabled"), Trigger: evt, ID: meta.string("id"), Name: meta.string("name")}
			switch h.Handler {
			case "eh_web_hook_handler":
				e.Type = "webhook"
				e.URL = meta.string("target_path")
				e.Method = meta.string("method")
				e.Headers = headersOf(meta.stringMap("header_map"))
				tmpl := meta.string("template_path")
				e.BodyTemplate = &tmpl
				timeout := meta.int("event_timeout")
				e.CooldownPeriod = seconds(timeout)
				if e.URL == "" {
					c.fail("%s.handler_meta.target_path: a webhook needs a target URL", at)
				}
				if !slices.Contains(webhookMethods, e.Method) {
					c.fail("%s.handler_meta.method: %q is not one of %v", at, e.Method, webhookMethods)
				}
				if timeout < 0 {
					c.fail("%s.handler_meta.event_timeout: %d is negative", at, timeout)
				}
			case "eh_dynamic_handler":
				e.Type = "custom"
				e.FunctionName = meta.string("name")
				path := meta.string("path")
				e.Path = &path
			case "eh_log_handler":
				e.Type = "log"
				prefix := meta.string("prefix")
				e.LogPrefix = &prefix
			default:
				c.fail("%s: event handler %q has no Tyk OAS equivalent", at, h.Handler)
				continue
			}
			if meta.bad != "" {
				c.fail("%s.handler_meta.%s: unexpected type", at, meta.bad)
			}
			out = append(out, e)
		}
	}
	return out
}

// metaReader reads typed values from a handler_meta object, remembering the first key of the wrong type.
type metaReader struct {
	m   map[string]any
	bad string
}

func (r *metaReader) string(k string) string {
	switch v := r.m[k].(type) {
	case nil:
		return ""
	case string:
		return v
	}
	r.badKey(k)
	return ""
}

func (r *metaReader) bool(k string) bool {
	switch v := r.m[k].(type) {
	case nil:
		return false
	case bool:
		return v
	}
	r.badKey(k)
	return false
}

func (r *metaReader) int(k string) int64 {
	switch v := r.m[k].(type) {
	case nil:
		return 0
	case float64:
		if v == float64(int64(v)) {
			return int64(v)
		}
	}
	r.badKey(k)
	return 0
}

func (r *metaReader) stringMap(k string) map[string]string {
	v, ok := r.m[k].(map[string]any)
	if !ok {
		if r.m[k] != nil {
			r.badKey(k)
		}
		return nil
	}
	out := make(map[string]string, len(v))
	for hk, hv := range v {
		s, ok := hv.(string)
		if !ok {
			r.badKey(k)
			continue
		}
		out[hk] = s
	}
	return out
}

func (r *metaReader) badKey(k string) {
	if r.bad == "" {
		r.bad = k
	}
}

// ipAccessControl: the gateway applies a classic list when it is not empty and either ip_access_control_disabled
// is false or the list's own flag is on (v5.11's IP middlewares; Tyk's migration reads the flags alone, which
// would open an API whose list the gateway enforces); Tyk OAS has one flag for both lists.
func (c *converter) ipAccessControl() *xIPAccessControl {
	api := c.api
	allow, block := api.AllowedIPs, api.BlacklistedIPs
	if len(allow) == 0 && len(block) == 0 {
		return nil
	}
	allowOn := (api.EnableIPWhiteListing || !api.IPAccessControlDisabled) && len(allow) > 0
	blockOn := (api.EnableIPBlacklisting || !api.IPAccessControlDisabled) && len(block) > 0
	switch {
	case allowOn && !blockOn && len(block) > 0:
		c.fail("blacklisted_ips: the list is off (enable_ip_blacklisting false) while allowed_ips is on; Tyk OAS switches both lists together")
	case blockOn && !allowOn && len(allow) > 0:
		c.fail("allowed_ips: the list is off (enable_ip_whitelisting false) while blacklisted_ips is on; Tyk OAS switches both lists together")
	}
	return &xIPAccessControl{Enabled: allowOn || blockOn, Allow: allow, Block: block}
}
