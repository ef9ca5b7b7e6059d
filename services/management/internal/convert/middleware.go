package convert

// x-tyk-api-gateway.middleware.global: the middleware that applies to every request of the API.

type xGlobal struct {
	PluginConfig              *xPluginConfig     `json:"pluginConfig,omitempty"`
	CORS                      *xCORS             `json:"cors,omitempty"`
	PrePlugins                []xCustomPlugin    `json:"prePlugins,omitempty"`
	PostAuthenticationPlugins []xCustomPlugin    `json:"postAuthenticationPlugins,omitempty"`
	PostPlugins               []xCustomPlugin    `json:"postPlugins,omitempty"`
	ResponsePlugins           []xCustomPlugin    `json:"responsePlugins,omitempty"`
	Cache                     *xCache            `json:"cache,omitempty"`
	TransformRequestHeaders   *xTransformHeaders `json:"transformRequestHeaders,omitempty"`
	TransformResponseHeaders  *xTransformHeaders `json:"transformResponseHeaders,omitempty"`
	ContextVariables          *xEnabled          `json:"contextVariables,omitempty"`
	TrafficLogs               *xTrafficLogs      `json:"trafficLogs,omitempty"`
	RequestSizeLimit          *xRequestSizeLimit `json:"requestSizeLimit,omitempty"`
	IgnoreCase                *xEnabled          `json:"ignoreCase,omitempty"`
	SkipRateLimit             bool               `json:"skipRateLimit,omitempty"`
	SkipQuota                 bool               `json:"skipQuota,omitempty"`
	SkipQuotaReset            bool               `json:"skipQuotaReset,omitempty"`
}

type xPluginConfig struct {
	Driver string             `json:"driver,omitempty"`
	Bundle *xPluginBundle     `json:"bundle,omitempty"`
	Data   *xPluginConfigData `json:"data,omitempty"`
}

type xPluginBundle struct {
	Enabled bool   `json:"enabled"`
	Path    string `json:"path"`
}

type xPluginConfigData struct {
	Enabled bool           `json:"enabled"`
	Value   map[string]any `json:"value"`
}

type xCORS struct {
	Enabled            bool     `json:"enabled"`
	MaxAge             int      `json:"maxAge,omitempty"`
	AllowCredentials   bool     `json:"allowCredentials,omitempty"`
	ExposedHeaders     []string `json:"exposedHeaders,omitempty"`
	AllowedHeaders     []string `json:"allowedHeaders,omitempty"`
	OptionsPassthrough bool     `json:"optionsPassthrough,omitempty"`
	Debug              bool     `json:"debug,omitempty"`
	AllowedOrigins     []string `json:"allowedOrigins,omitempty"`
	AllowedMethods     []string `json:"allowedMethods,omitempty"`
}

type xCustomPlugin struct {
	Enabled        bool   `json:"enabled"`
	FunctionName   string `json:"functionName"`
	Path           string `json:"path,omitempty"`
	RawBodyOnly    bool   `json:"rawBodyOnly,omitempty"`
	RequireSession bool   `json:"requireSession,omitempty"`
}

type xCache struct {
	Enabled                    bool     `json:"enabled"`
	Timeout                    int64    `json:"timeout,omitempty"`
	CacheAllSafeRequests       bool     `json:"cacheAllSafeRequests,omitempty"`
	CacheResponseCodes         []int    `json:"cacheResponseCodes,omitempty"`
	CacheByHeaders             []string `json:"cacheByHeaders,omitempty"`
	EnableUpstreamCacheControl bool     `json:"enableUpstreamCacheControl,omitempty"`
	ControlTTLHeaderName       string   `json:"controlTTLHeaderName,omitempty"`
}

type xTransformHeaders struct {
	Enabled bool      `json:"enabled"`
	Remove  []string  `json:"remove,omitempty"`
	Add     []xHeader `json:"add,omitempty"`
}

type xTrafficLogs struct {
	Enabled               bool               `json:"enabled"`
	TagHeaders            []string           `json:"tagHeaders,omitempty"`
	CustomRetentionPeriod string             `json:"customRetentionPeriod,omitempty"`
	Plugins               []xAnalyticsPlugin `json:"plugins,omitempty"`
}

type xAnalyticsPlugin struct {
	Enabled      bool   `json:"enabled"`
	FunctionName string `json:"functionName,omitempty"`
	Path         string `json:"path,omitempty"`
}

type xRequestSizeLimit struct {
	Enabled bool  `json:"enabled"`
	Value   int64 `json:"value"`
}

func (c *converter) global(t *target) *xGlobal {
	if c.shared.global == nil {
		c.shared.global = c.sharedGlobal()
	}
	v := t.version
	g := new(xGlobal)
	*g = *c.shared.global
	g.TransformRequestHeaders = transformHeaders(v.GlobalHeadersDisabled, v.GlobalHeaders, v.GlobalHeadersRemove)
	g.TransformResponseHeaders = transformHeaders(v.GlobalResponseHeadersDisabled, v.GlobalResponseHeaders, v.GlobalResponseHeadersRemove)
	if v.GlobalSizeLimit > 0 {
		g.RequestSizeLimit = &xRequestSizeLimit{Enabled: !v.GlobalSizeLimitDisabled, Value: v.GlobalSizeLimit}
	} else if v.GlobalSizeLimit < 0 {
		c.fail("version_data.versions[%q].global_size_limit: %d is negative", t.versionName, v.GlobalSizeLimit)
	}
	if v.IgnoreEndpointCase {
		g.IgnoreCase = &xEnabled{Enabled: true}
	}
	return g
}

// sharedGlobal is the global middleware of every document but the version's own settings.
func (c *converter) sharedGlobal() *xGlobal {
	api := c.api
	mw := api.CustomMiddleware
	g := &xGlobal{
		PluginConfig:              c.pluginConfig(),
		CORS:                      cors(api.CORS),
		PrePlugins:                c.customPlugins("custom_middleware.pre", mw.Pre),
		PostAuthenticationPlugins: c.customPlugins("custom_middleware.post_key_auth", mw.PostKeyAuth),
		PostPlugins:               c.customPlugins("custom_middleware.post", mw.Post),
		ResponsePlugins:           c.customPlugins("custom_middleware.response", mw.Response),
		Cache:                     c.cache(),
		TrafficLogs:               c.trafficLogs(),
		SkipRateLimit:             api.DisableRateLimit,
		SkipQuota:                 api.DisableQuota,
		SkipQuotaReset:            api.DontSetQuotasOnCreate,
	}
	if api.EnableContextVars {
		g.ContextVariables = &xEnabled{Enabled: true}
	}
	return g
}

func (c *converter) pluginConfig() *xPluginConfig {
	api := c.api
	pc := &xPluginConfig{Driver: api.CustomMiddleware.Driver}
	switch pc.Driver {
	case "", "otto", "python", "lua", "grpc", "goplugin":
	default:
		c.fail("custom_middleware.driver: %q is not one of otto, python, lua, grpc, goplugin", pc.Driver)
	}
	if api.CustomMiddlewareBundle != "" {
		pc.Bundle = &xPluginBundle{Enabled: !api.CustomMiddlewareBundleDisabled, Path: api.CustomMiddlewareBundle}
	}
	if len(api.ConfigData) > 0 {
		pc.Data = &xPluginConfigData{Enabled: !api.ConfigDataDisabled, Value: api.ConfigData}
	}
	if *pc == (xPluginConfig{}) {
		return nil
	}
	return pc
}

func cors(c corsConfig) *xCORS {
	x := &xCORS{Enabled: c.Enable, MaxAge: c.MaxAge, AllowCredentials: c.AllowCredentials, ExposedHeaders: c.ExposedHeaders,
		AllowedHeaders: c.AllowedHeaders, OptionsPassthrough: c.OptionsPassthrough, Debug: c.Debug,
		AllowedOrigins: c.AllowedOrigins, AllowedMethods: c.AllowedMethods}
	if !x.Enabled && x.MaxAge == 0 && !x.AllowCredentials && len(x.ExposedHeaders) == 0 && len(x.AllowedHeaders) == 0 &&
		!x.OptionsPassthrough && !x.Debug && len(x.AllowedOrigins) == 0 && len(x.AllowedMethods) == 0 {
		return nil
	}
	return x
}

func (c *converter) customPlugins(field string, list []middlewareDefinition) []xCustomPlugin {
	var out []xCustomPlugin
	for _, m := range list {
		out = append(out, xCustomPlugin{Enabled: !m.Disabled, FunctionName: m.Name, Path: m.Path, RawBodyOnly: m.RawBodyOnly, RequireSession: m.RequireSession})
	}
	return out
}

func (c *converter) cache() *xCache {
	o := c.api.CacheOptions
	x := &xCache{Enabled: o.EnableCache, Timeout: o.CacheTimeout, CacheAllSafeRequests: o.CacheAllSafeRequests,
		CacheResponseCodes: o.CacheOnlyResponseCodes, CacheByHeaders: o.CacheByHeaders,
		EnableUpstreamCacheControl: o.EnableUpstreamCacheControl, ControlTTLHeaderName: o.CacheControlTTLHeader}
	if !x.Enabled && x.Timeout == 0 && !x.CacheAllSafeRequests && len(x.CacheResponseCodes) == 0 && len(x.CacheByHeaders) == 0 &&
		!x.EnableUpstreamCacheControl && x.ControlTTLHeaderName == "" {
		return nil
	}
	if x.Timeout < 0 {
		c.fail("cache_options.cache_timeout: %d is negative", x.Timeout)
	}
	return x
}

func transformHeaders(disabled bool, add map[string]string, remove []string) *xTransformHeaders {
	if len(add) == 0 && len(remove) == 0 {
		return nil
	}
	return &xTransformHeaders{Enabled: !disabled, Remove: remove, Add: headersOf(add)}
}

// trafficLogs is always written: Tyk records traffic unless do_not_track is set.
func (c *converter) trafficLogs() *xTrafficLogs {
	api := c.api
	tl := &xTrafficLogs{Enabled: !api.DoNotTrack, TagHeaders: api.TagHeaders}
	if api.ExpireAnalyticsAfter > 0 {
		tl.CustomRetentionPeriod = seconds(api.ExpireAnalyticsAfter)
	} else if api.ExpireAnalyticsAfter < 0 {
		c.fail("expire_analytics_after: %d is negative", api.ExpireAnalyticsAfter)
	}
	if p := api.AnalyticsPlugin; p.Enabled || p.FuncName != "" || p.PluginPath != "" {
		tl.Plugins = []xAnalyticsPlugin{{Enabled: p.Enabled, FunctionName: p.FuncName, Path: p.PluginPath}}
	}
	return tl
}
