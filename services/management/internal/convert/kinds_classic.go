package convert

import (
	"time"
)

// The classic direction of the kinds table: one function per classic list, each appending the setting of one
// operation (when it has it) as an entry for the operation's classic path and method. Each undoes its toOAS
// function in kinds.go.

func allowanceEntry(a *xAllowance, e endpointRef) endpointMeta {
	return endpointMeta{Disabled: !a.Enabled, Path: e.Path, Method: e.Method, IgnoreCase: a.IgnoreCase}
}

func allowToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if x.Allow != nil {
		ep.WhiteList = append(ep.WhiteList, allowanceEntry(x.Allow, e))
	}
}

func blockToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if x.Block != nil {
		ep.BlackList = append(ep.BlackList, allowanceEntry(x.Block, e))
	}
}

func ignoreToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if x.IgnoreAuthentication != nil {
		ep.Ignored = append(ep.Ignored, allowanceEntry(x.IgnoreAuthentication, e))
	}
}

func methodTransformToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if m := x.TransformRequestMethod; m != nil {
		ep.MethodTransforms = append(ep.MethodTransforms, methodTransform{Disabled: !m.Enabled, Path: e.Path, Method: e.Method, ToMethod: m.ToMethod})
	}
}

// templateEntry is the classic transform of a body transformation: blob for an inline body, file otherwise.
// A Tyk OAS template always reads the session (Tyk's OAS.ExtractTo writes enable_session true): the document
// has no such switch, and a gateway loading it itself gives templates the session's metadata.
func templateEntry(t *xTransformBody, e endpointRef) templateMeta {
	m := templateMeta{Disabled: !t.Enabled, Path: e.Path, Method: e.Method}
	m.TemplateData.Input, m.TemplateData.EnableSession = t.Format, true
	if t.Body != nil && *t.Body != "" {
		m.TemplateData.Mode, m.TemplateData.TemplateSource = "blob", *t.Body
	} else {
		m.TemplateData.Mode = "file"
		if t.Path != nil {
			m.TemplateData.TemplateSource = *t.Path
		}
	}
	return m
}

func transformToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if x.TransformRequestBody != nil {
		ep.Transform = append(ep.Transform, templateEntry(x.TransformRequestBody, e))
	}
}

func transformResponseToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if x.TransformResponseBody != nil {
		ep.TransformResponse = append(ep.TransformResponse, templateEntry(x.TransformResponseBody, e))
	}
}

func headerEntry(h *xTransformHeaders, e endpointRef) headerInjection {
	return headerInjection{Disabled: !h.Enabled, Path: e.Path, Method: e.Method, DeleteHeaders: h.Remove, AddHeaders: headerMap(h.Add)}
}

func transformHeadersToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if x.TransformRequestHeaders != nil {
		ep.TransformHeader = append(ep.TransformHeader, headerEntry(x.TransformRequestHeaders, e))
	}
}

func transformResponseHeadersToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if x.TransformResponseHeaders != nil {
		ep.TransformResponseHeader = append(ep.TransformResponseHeader, headerEntry(x.TransformResponseHeaders, e))
	}
}

func urlRewriteToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	u := x.URLRewrite
	if u == nil {
		return
	}
	m := urlRewriteMeta{Disabled: !u.Enabled, Path: e.Path, Method: e.Method, MatchPattern: u.Pattern, RewriteTo: u.RewriteTo}
	for _, t := range u.Triggers {
		m.Triggers = append(m.Triggers, rewriteTrigger(t))
	}
	ep.URLRewrite = append(ep.URLRewrite, m)
}

// rewriteTrigger puts each rule of a trigger in the classic match map of its source.
func rewriteTrigger(t xURLRewriteTrigger) urlRewriteTrigger {
	out := urlRewriteTrigger{On: t.Condition, RewriteTo: t.RewriteTo}
	o := &out.Options
	for _, r := range t.Rules {
		match := regexMatch{MatchPattern: r.Pattern, Reverse: r.Negate}
		var group *map[string]regexMatch
		switch r.In {
		case "header":
			group = &o.HeaderMatches
		case "query":
			group = &o.QueryValMatches
		case "path":
			group = &o.PathPartMatches
		case "sessionMetadata":
			group = &o.SessionMetaMatches
		case "requestContext":
			group = &o.RequestContextMatches
		case "requestBody":
			o.PayloadMatches = match
			continue
		default:
			continue
		}
		if *group == nil {
			*group = map[string]regexMatch{}
		}
		name := ""
		if r.Name != nil {
			name = *r.Name
		}
		(*group)[name] = match
	}
	return out
}

func internalToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if x.Internal != nil {
		ep.Internal = append(ep.Internal, endpointRef{Disabled: !x.Internal.Enabled, Path: e.Path, Method: e.Method})
	}
}

func cacheToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if c := x.Cache; c != nil {
		ep.AdvanceCacheConfig = append(ep.AdvanceCacheConfig, cacheMeta{Disabled: !c.Enabled, Path: e.Path, Method: e.Method,
			CacheKeyRegex: c.CacheByRegex, CacheOnlyResponseCodes: c.CacheResponseCodes, Timeout: c.Timeout})
	}
}

func hardTimeoutToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if t := x.EnforceTimeout; t != nil {
		ep.HardTimeouts = append(ep.HardTimeouts, hardTimeoutMeta{Disabled: !t.Enabled, Path: e.Path, Method: e.Method, TimeOut: t.Value})
	}
}

func virtualToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	v := x.VirtualEndpoint
	if v == nil {
		return
	}
	m := virtualMeta{Disabled: !v.Enabled, Path: e.Path, Method: e.Method, ResponseFunctionName: v.FunctionName,
		UseSession: v.RequireSession, ProxyOnError: v.ProxyOnError}
	switch {
	case v.Body != nil:
		m.FunctionSourceType, m.FunctionSourceURI = "blob", *v.Body
	case v.Path != nil:
		m.FunctionSourceType, m.FunctionSourceURI = "file", *v.Path
	}
	ep.Virtual = append(ep.Virtual, m)
}

func goPluginToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	for _, p := range x.PostPlugins {
		ep.GoPlugin = append(ep.GoPlugin, goPluginMeta{Disabled: !p.Enabled, Path: e.Path, Method: e.Method, PluginPath: p.Path, SymbolName: p.FunctionName})
	}
}

func circuitBreakerToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if c := x.CircuitBreaker; c != nil {
		ep.CircuitBreaker = append(ep.CircuitBreaker, circuitBreakerMeta{Disabled: !c.Enabled, Path: e.Path, Method: e.Method,
			ThresholdPercent: c.Threshold, Samples: c.SampleSize, ReturnToServiceAfter: c.CoolDownPeriod, DisableHalfOpenState: !c.HalfOpenStateEnabled})
	}
}

func trackToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if x.TrackEndpoint != nil {
		ep.TrackEndpoints = append(ep.TrackEndpoints, endpointRef{Disabled: !x.TrackEndpoint.Enabled, Path: e.Path, Method: e.Method})
	}
}

func doNotTrackToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if x.DoNotTrackEndpoint != nil {
		ep.DoNotTrackEndpoints = append(ep.DoNotTrackEndpoints, endpointRef{Disabled: !x.DoNotTrackEndpoint.Enabled, Path: e.Path, Method: e.Method})
	}
}

func sizeLimitToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if l := x.RequestSizeLimit; l != nil {
		ep.SizeLimit = append(ep.SizeLimit, sizeLimitMeta{Disabled: !l.Enabled, Path: e.Path, Method: e.Method, SizeLimit: l.Value})
	}
}

func rateLimitToClassic(ep *extendedPaths, x *xOperation, e endpointRef) {
	if r := x.RateLimit; r != nil {
		ep.RateLimit = append(ep.RateLimit, endpointRateLimit{Disabled: !r.Enabled, Path: e.Path, Method: e.Method, Rate: r.Rate, Per: durationSeconds(r.Per)})
	}
}

// headerMap is the classic form of a header list.
func headerMap(hs []xHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

// durationNanos reads a Tyk OAS duration as nanoseconds; 0 for "" or a value it cannot read.
func durationNanos(s string) time.Duration {
	d, _ := time.ParseDuration(s)
	return d
}

// durationSeconds reads a Tyk OAS duration ("1m30s") as seconds; 0 for "" or a value it cannot read.
func durationSeconds(s string) float64 {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0
	}
	return d.Seconds()
}
