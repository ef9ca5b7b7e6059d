package convert

import "encoding/json"

// The classic API definition as stored by the Dashboard (the "api_definition" object), reduced to the fields the
// conversion reads. Unknown fields are ignored by encoding/json; the settings that have no Tyk OAS equivalent are
// still decoded so that the conversion can refuse them instead of dropping them.

// classicAPI is a Tyk classic API definition.
type classicAPI struct {
	ID                  string `json:"id"`
	APIID               string `json:"api_id"`
	OrgID               string `json:"org_id"`
	Name                string `json:"name"`
	Slug                string `json:"slug"`
	Active              bool   `json:"active"`
	Internal            bool   `json:"internal"`
	IsOAS               bool   `json:"is_oas"`
	Expiration          string `json:"expiration"`
	Protocol            string `json:"protocol"`
	ListenPort          int    `json:"listen_port"`
	EnableProxyProtocol bool   `json:"enable_proxy_protocol"`
	// Newer settings this migration does not convert; refuseUnsupported fails the API when they are in use.
	JWTJWKSURIs            json.RawMessage `json:"jwt_jwks_uris"`
	ErrorOverrides         json.RawMessage `json:"error_overrides"`
	ErrorOverridesDisabled bool            `json:"error_overrides_disabled"`
	JSONRPCVersion         string          `json:"json_rpc_version"`
	ApplicationProtocol    string          `json:"application_protocol"`

	Domain         string   `json:"domain"`
	DomainDisabled bool     `json:"domain_disabled"`
	Certificates   []string `json:"certificates"`
	Tags           []string `json:"tags"`
	TagsDisabled   bool     `json:"tags_disabled"`

	UseKeyless              bool `json:"use_keyless"`
	UseStandardAuth         bool `json:"use_standard_auth"`
	UseBasicAuth            bool `json:"use_basic_auth"`
	EnableJWT               bool `json:"enable_jwt"`
	UseOauth2               bool `json:"use_oauth2"`
	EnableSignatureChecking bool `json:"enable_signature_checking"`
	UseOpenID               bool `json:"use_openid"`
	UseGoPluginAuth         bool `json:"use_go_plugin_auth"`
	EnableCoprocessAuth     bool `json:"enable_coprocess_auth"`
	CustomPluginAuthEnabled bool `json:"custom_plugin_auth_enabled"`

	Auth                                 authConfig            `json:"auth"`
	AuthConfigs                          map[string]authConfig `json:"auth_configs"`
	StripAuthData                        bool                  `json:"strip_auth_data"`
	BaseIdentityProvidedBy               string                `json:"base_identity_provided_by"`
	SessionLifetime                      int64                 `json:"session_lifetime"`
	SessionLifetimeRespectsKeyExpiration bool                  `json:"session_lifetime_respects_key_expiration"`
	SecurityRequirements                 [][]string            `json:"security_requirements"`

	UseMutualTLSAuth             bool              `json:"use_mutual_tls_auth"`
	ClientCertificates           []string          `json:"client_certificates"`
	UpstreamCertificates         map[string]string `json:"upstream_certificates"`
	UpstreamCertificatesDisabled bool              `json:"upstream_certificates_disabled"`
	PinnedPublicKeys             map[string]string `json:"pinned_public_keys"`
	CertificatePinningDisabled   bool              `json:"certificate_pinning_disabled"`

	BasicAuth struct {
		DisableCaching     bool   `json:"disable_caching"`
		CacheTTL           int    `json:"cache_ttl"`
		ExtractFromBody    bool   `json:"extract_from_body"`
		BodyUserRegexp     string `json:"body_user_regexp"`
		BodyPasswordRegexp string `json:"body_password_regexp"`
	} `json:"basic_auth"`

	JWTSigningMethod           string            `json:"jwt_signing_method"`
	JWTSource                  string            `json:"jwt_source"`
	JWTIdentityBaseField       string            `json:"jwt_identity_base_field"`
	JWTClientIDBaseField       string            `json:"jwt_client_base_field"`
	JWTPolicyFieldName         string            `json:"jwt_policy_field_name"`
	JWTDefaultPolicies         []string          `json:"jwt_default_policies"`
	JWTIssuedAtValidationSkew  uint64            `json:"jwt_issued_at_validation_skew"`
	JWTExpiresAtValidationSkew uint64            `json:"jwt_expires_at_validation_skew"`
	JWTNotBeforeValidationSkew uint64            `json:"jwt_not_before_validation_skew"`
	JWTSkipKid                 bool              `json:"jwt_skip_kid"`
	JWTScopeToPolicyMapping    map[string]string `json:"jwt_scope_to_policy_mapping"`
	JWTScopeClaimName          string            `json:"jwt_scope_claim_name"`
	IDPClientIDMappingDisabled bool              `json:"idp_client_id_mapping_disabled"`
	Scopes                     classicScopes     `json:"scopes"`
	HmacAllowedAlgorithms      []string          `json:"hmac_allowed_algorithms"`
	HmacAllowedClockSkew       float64           `json:"hmac_allowed_clock_skew"`
	OauthMeta                  oauthMeta         `json:"oauth_meta"`
	Notifications              notifications     `json:"notifications"`
	ExternalOAuth              externalOAuth     `json:"external_oauth"`
	OpenIDOptions              openIDOptions     `json:"openid_options"`

	Proxy           proxyConfig     `json:"proxy"`
	UptimeTests     uptimeTests     `json:"uptime_tests"`
	GlobalRateLimit rateLimitConfig `json:"global_rate_limit"`
	UpstreamAuth    upstreamAuth    `json:"upstream_auth"`
	RequestSigning  requestSigning  `json:"request_signing"`

	CustomMiddleware               customMiddleware `json:"custom_middleware"`
	CustomMiddlewareBundle         string           `json:"custom_middleware_bundle"`
	CustomMiddlewareBundleDisabled bool             `json:"custom_middleware_bundle_disabled"`
	ConfigData                     map[string]any   `json:"config_data"`
	ConfigDataDisabled             bool             `json:"config_data_disabled"`
	CORS                           corsConfig       `json:"CORS"`
	CacheOptions                   cacheOptions     `json:"cache_options"`
	EnableContextVars              bool             `json:"enable_context_vars"`
	DoNotTrack                     bool             `json:"do_not_track"`
	TagHeaders                     []string         `json:"tag_headers"`
	ExpireAnalyticsAfter           int64            `json:"expire_analytics_after"`
	AnalyticsPlugin                analyticsPlugin  `json:"analytics_plugin"`
	DisableRateLimit               bool             `json:"disable_rate_limit"`
	DisableQuota                   bool             `json:"disable_quota"`
	DontSetQuotasOnCreate          bool             `json:"dont_set_quota_on_create"`
	EnableDetailedRecording        bool             `json:"enable_detailed_recording"`
	DetailedTracing                bool             `json:"detailed_tracing"`
	EventHandlers                  eventHandlers    `json:"event_handlers"`
	EnableIPWhiteListing           bool             `json:"enable_ip_whitelisting"`
	EnableIPBlacklisting           bool             `json:"enable_ip_blacklisting"`
	AllowedIPs                     []string         `json:"allowed_ips"`
	BlacklistedIPs                 []string         `json:"blacklisted_ips"`
	IPAccessControlDisabled        bool             `json:"ip_access_control_disabled"`
	EnableBatchRequestSupport      bool             `json:"enable_batch_request_support"`

	Definition  versionDefinition `json:"definition"`
	VersionData versionData       `json:"version_data"`

	ResponseProcessors []responseProcessor `json:"response_processors"`
	GraphQL            struct {
		Enabled bool `json:"enabled"`
	} `json:"graphql"`
	AuthProvider    providerConfig `json:"auth_provider"`
	SessionProvider providerConfig `json:"session_provider"`
}

// authConfig is one entry of auth_configs (and the deprecated auth block).
type authConfig struct {
	Name              string `json:"name"`
	UseParam          bool   `json:"use_param"`
	ParamName         string `json:"param_name"`
	UseCookie         bool   `json:"use_cookie"`
	CookieName        string `json:"cookie_name"`
	DisableHeader     bool   `json:"disable_header"`
	AuthHeaderName    string `json:"auth_header_name"`
	UseCertificate    bool   `json:"use_certificate"`
	ValidateSignature bool   `json:"validate_signature"`
	Signature         struct {
		Algorithm        string `json:"algorithm"`
		Header           string `json:"header"`
		UseParam         bool   `json:"use_param"`
		ParamName        string `json:"param_name"`
		Secret           string `json:"secret"`
		AllowedClockSkew int64  `json:"allowed_clock_skew"`
		ErrorCode        int    `json:"error_code"`
		ErrorMessage     string `json:"error_message"`
	} `json:"signature"`
}

type classicScopes struct {
	JWT  scopeClaim `json:"jwt"`
	OIDC scopeClaim `json:"oidc"`
}

type scopeClaim struct {
	ScopeClaimName string            `json:"scope_claim_name"`
	ScopeToPolicy  map[string]string `json:"scope_to_policy"`
}

type oauthMeta struct {
	AllowedAccessTypes     []string `json:"allowed_access_types"`
	AllowedAuthorizeTypes  []string `json:"allowed_authorize_types"`
	AuthorizeLoginRedirect string   `json:"auth_login_redirect"`
}

type notifications struct {
	SharedSecret      string `json:"shared_secret"`
	OAuthKeyChangeURL string `json:"oauth_on_keychange_url"`
}

type externalOAuth struct {
	Enabled   bool                    `json:"enabled"`
	Providers []externalOAuthProvider `json:"providers"`
}

type externalOAuthProvider struct {
	JWT           jwtValidation `json:"jwt"`
	Introspection struct {
		Enabled           bool   `json:"enabled"`
		URL               string `json:"url"`
		ClientID          string `json:"client_id"`
		ClientSecret      string `json:"client_secret"`
		IdentityBaseField string `json:"identity_base_field"`
		Cache             struct {
			Enabled bool  `json:"enabled"`
			Timeout int64 `json:"timeout"`
		} `json:"cache"`
	} `json:"introspection"`
}

type jwtValidation struct {
	Enabled                 bool   `json:"enabled"`
	SigningMethod           string `json:"signing_method"`
	Source                  string `json:"source"`
	IssuedAtValidationSkew  uint64 `json:"issued_at_validation_skew"`
	NotBeforeValidationSkew uint64 `json:"not_before_validation_skew"`
	ExpiresAtValidationSkew uint64 `json:"expires_at_validation_skew"`
	IdentityBaseField       string `json:"identity_base_field"`
}

type openIDOptions struct {
	Providers         []openIDProvider `json:"providers"`
	SegregateByClient bool             `json:"segregate_by_client"`
}

type openIDProvider struct {
	Issuer    string            `json:"issuer"`
	ClientIDs map[string]string `json:"client_ids"`
}

type proxyConfig struct {
	ListenPath                  string                 `json:"listen_path"`
	TargetURL                   string                 `json:"target_url"`
	StripListenPath             bool                   `json:"strip_listen_path"`
	PreserveHostHeader          bool                   `json:"preserve_host_header"`
	DisableStripSlash           bool                   `json:"disable_strip_slash"`
	EnableLoadBalancing         bool                   `json:"enable_load_balancing"`
	Targets                     []string               `json:"target_list"`
	CheckHostAgainstUptimeTests bool                   `json:"check_host_against_uptime_tests"`
	ServiceDiscovery            serviceDiscoveryConfig `json:"service_discovery"`
	Transport                   struct {
		SSLInsecureSkipVerify   bool     `json:"ssl_insecure_skip_verify"`
		SSLCipherSuites         []string `json:"ssl_ciphers"`
		SSLMinVersion           uint16   `json:"ssl_min_version"`
		SSLMaxVersion           uint16   `json:"ssl_max_version"`
		SSLForceCommonNameCheck bool     `json:"ssl_force_common_name_check"`
		ProxyURL                string   `json:"proxy_url"`
	} `json:"transport"`
}

type serviceDiscoveryConfig struct {
	UseDiscoveryService bool   `json:"use_discovery_service"`
	QueryEndpoint       string `json:"query_endpoint"`
	UseNestedQuery      bool   `json:"use_nested_query"`
	ParentDataPath      string `json:"parent_data_path"`
	DataPath            string `json:"data_path"`
	PortDataPath        string `json:"port_data_path"`
	TargetPath          string `json:"target_path"`
	UseTargetList       bool   `json:"use_target_list"`
	CacheDisabled       bool   `json:"cache_disabled"`
	CacheTimeout        int64  `json:"cache_timeout"`
	EndpointReturnsList bool   `json:"endpoint_returns_list"`
}

type uptimeTests struct {
	CheckList []uptimeCheck `json:"check_list"`
	Config    struct {
		ExpireUptimeAnalyticsAfter int64                  `json:"expire_utime_after"`
		ServiceDiscovery           serviceDiscoveryConfig `json:"service_discovery"`
		RecheckWait                int64                  `json:"recheck_wait"`
	} `json:"config"`
	Disabled bool `json:"disabled"`
}

type uptimeCheck struct {
	CheckURL            string            `json:"url"`
	Protocol            string            `json:"protocol"`
	Timeout             int64             `json:"timeout"`
	Method              string            `json:"method"`
	Headers             map[string]string `json:"headers"`
	Body                string            `json:"body"`
	EnableProxyProtocol bool              `json:"enable_proxy_protocol"`
	Commands            []uptimeCommand   `json:"commands"`
}

type uptimeCommand struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

type rateLimitConfig struct {
	Disabled bool    `json:"disabled"`
	Rate     float64 `json:"rate"`
	Per      float64 `json:"per"`
}

type authSourceConfig struct {
	Enabled bool   `json:"enabled"`
	Name    string `json:"name"`
}

type upstreamAuth struct {
	Enabled   bool `json:"enabled"`
	BasicAuth struct {
		Enabled  bool             `json:"enabled"`
		Username string           `json:"username"`
		Password string           `json:"password"`
		Header   authSourceConfig `json:"header"`
	} `json:"basic_auth"`
	OAuth struct {
		Enabled               bool     `json:"enabled"`
		AllowedAuthorizeTypes []string `json:"allowed_authorize_types"`
		ClientCredentials     struct {
			ClientID      string           `json:"client_id"`
			ClientSecret  string           `json:"client_secret"`
			TokenURL      string           `json:"token_url"`
			Scopes        []string         `json:"scopes"`
			Header        authSourceConfig `json:"header"`
			ExtraMetadata []string         `json:"extra_metadata"`
		} `json:"client_credentials"`
		PasswordAuthentication struct {
			ClientID      string           `json:"client_id"`
			ClientSecret  string           `json:"client_secret"`
			TokenURL      string           `json:"token_url"`
			Scopes        []string         `json:"scopes"`
			Username      string           `json:"username"`
			Password      string           `json:"password"`
			Header        authSourceConfig `json:"header"`
			ExtraMetadata []string         `json:"extra_metadata"`
		} `json:"password"`
	} `json:"oauth"`
}

type requestSigning struct {
	IsEnabled       bool     `json:"is_enabled"`
	Secret          string   `json:"secret"`
	KeyID           string   `json:"key_id"`
	Algorithm       string   `json:"algorithm"`
	HeaderList      []string `json:"header_list"`
	CertificateID   string   `json:"certificate_id"`
	SignatureHeader string   `json:"signature_header"`
}

type middlewareDefinition struct {
	Disabled       bool   `json:"disabled"`
	Name           string `json:"name"`
	Path           string `json:"path"`
	RequireSession bool   `json:"require_session"`
	RawBodyOnly    bool   `json:"raw_body_only"`
}

type customMiddleware struct {
	Pre         []middlewareDefinition `json:"pre"`
	Post        []middlewareDefinition `json:"post"`
	PostKeyAuth []middlewareDefinition `json:"post_key_auth"`
	AuthCheck   middlewareDefinition   `json:"auth_check"`
	Response    []middlewareDefinition `json:"response"`
	Driver      string                 `json:"driver"`
	IDExtractor struct {
		Disabled        bool           `json:"disabled"`
		ExtractFrom     string         `json:"extract_from"`
		ExtractWith     string         `json:"extract_with"`
		ExtractorConfig map[string]any `json:"extractor_config"`
	} `json:"id_extractor"`
	TrafficLogs []middlewareDefinition `json:"traffic_logs"`
}

type corsConfig struct {
	Enable             bool     `json:"enable"`
	AllowedOrigins     []string `json:"allowed_origins"`
	AllowedMethods     []string `json:"allowed_methods"`
	AllowedHeaders     []string `json:"allowed_headers"`
	ExposedHeaders     []string `json:"exposed_headers"`
	AllowCredentials   bool     `json:"allow_credentials"`
	MaxAge             int      `json:"max_age"`
	OptionsPassthrough bool     `json:"options_passthrough"`
	Debug              bool     `json:"debug"`
}

type cacheOptions struct {
	CacheTimeout               int64    `json:"cache_timeout"`
	EnableCache                bool     `json:"enable_cache"`
	CacheAllSafeRequests       bool     `json:"cache_all_safe_requests"`
	CacheOnlyResponseCodes     []int    `json:"cache_response_codes"`
	EnableUpstreamCacheControl bool     `json:"enable_upstream_cache_control"`
	CacheControlTTLHeader      string   `json:"cache_control_ttl_header"`
	CacheByHeaders             []string `json:"cache_by_headers"`
}

type analyticsPlugin struct {
	Enabled    bool   `json:"enable"`
	PluginPath string `json:"plugin_path"`
	FuncName   string `json:"func_name"`
}

type eventHandlers struct {
	Events map[string][]eventHandler `json:"events"`
}

type eventHandler struct {
	Handler     string         `json:"handler_name"`
	HandlerMeta map[string]any `json:"handler_meta"`
}

type versionDefinition struct {
	Enabled              bool              `json:"enabled"`
	Name                 string            `json:"name"`
	Default              string            `json:"default"`
	Location             string            `json:"location"`
	Key                  string            `json:"key"`
	StripPath            bool              `json:"strip_path"`
	StripVersioningData  bool              `json:"strip_versioning_data"`
	URLVersioningPattern string            `json:"url_versioning_pattern"`
	FallbackToDefault    bool              `json:"fallback_to_default"`
	Versions             map[string]string `json:"versions"`
}

type versionData struct {
	NotVersioned   bool                    `json:"not_versioned"`
	DefaultVersion string                  `json:"default_version"`
	Versions       map[string]*versionInfo `json:"versions"`
}

type versionInfo struct {
	Name                          string            `json:"name"`
	GlobalEnforceTimeout          json.RawMessage   `json:"global_enforce_timeout"`
	GlobalEnforceTimeoutDisabled  bool              `json:"global_enforce_timeout_disabled"`
	Expires                       string            `json:"expires"`
	Paths                         legacyPaths       `json:"paths"`
	UseExtendedPaths              bool              `json:"use_extended_paths"`
	ExtendedPaths                 extendedPaths     `json:"extended_paths"`
	GlobalHeaders                 map[string]string `json:"global_headers"`
	GlobalHeadersRemove           []string          `json:"global_headers_remove"`
	GlobalHeadersDisabled         bool              `json:"global_headers_disabled"`
	GlobalResponseHeaders         map[string]string `json:"global_response_headers"`
	GlobalResponseHeadersRemove   []string          `json:"global_response_headers_remove"`
	GlobalResponseHeadersDisabled bool              `json:"global_response_headers_disabled"`
	IgnoreEndpointCase            bool              `json:"ignore_endpoint_case"`
	GlobalSizeLimit               int64             `json:"global_size_limit"`
	GlobalSizeLimitDisabled       bool              `json:"global_size_limit_disabled"`
	OverrideTarget                string            `json:"override_target"`
}

type legacyPaths struct {
	Ignored   []string `json:"ignored"`
	WhiteList []string `json:"white_list"`
	BlackList []string `json:"black_list"`
}

// extendedPaths holds the per-endpoint middleware of one version.
type extendedPaths struct {
	Ignored                 []endpointMeta       `json:"ignored"`
	WhiteList               []endpointMeta       `json:"white_list"`
	BlackList               []endpointMeta       `json:"black_list"`
	MockResponse            []mockResponseMeta   `json:"mock_response"`
	Cached                  []string             `json:"cache"`
	AdvanceCacheConfig      []cacheMeta          `json:"advance_cache_config"`
	Transform               []templateMeta       `json:"transform"`
	TransformResponse       []templateMeta       `json:"transform_response"`
	TransformJQ             []endpointRef        `json:"transform_jq"`
	TransformJQResponse     []endpointRef        `json:"transform_jq_response"`
	TransformHeader         []headerInjection    `json:"transform_headers"`
	TransformResponseHeader []headerInjection    `json:"transform_response_headers"`
	HardTimeouts            []hardTimeoutMeta    `json:"hard_timeouts"`
	CircuitBreaker          []circuitBreakerMeta `json:"circuit_breakers"`
	URLRewrite              []urlRewriteMeta     `json:"url_rewrites"`
	Virtual                 []virtualMeta        `json:"virtual"`
	SizeLimit               []sizeLimitMeta      `json:"size_limits"`
	MethodTransforms        []methodTransform    `json:"method_transforms"`
	TrackEndpoints          []endpointRef        `json:"track_endpoints"`
	DoNotTrackEndpoints     []endpointRef        `json:"do_not_track_endpoints"`
	ValidateJSON            []validateJSONMeta   `json:"validate_json"`
	Internal                []endpointRef        `json:"internal"`
	GoPlugin                []goPluginMeta       `json:"go_plugin"`
	PersistGraphQL          []endpointRef        `json:"persist_graphql"`
	RateLimit               []endpointRateLimit  `json:"rate_limit"`
}

// endpointRef is the path, method and disabled flag every endpoint entry carries.
type endpointRef struct {
	Disabled bool   `json:"disabled"`
	Path     string `json:"path"`
	Method   string `json:"method"`
}

type endpointMeta struct {
	Disabled      bool                    `json:"disabled"`
	Path          string                  `json:"path"`
	Method        string                  `json:"method"`
	IgnoreCase    bool                    `json:"ignore_case"`
	MethodActions map[string]methodAction `json:"method_actions"`
}

type methodAction struct {
	Action  string            `json:"action"`
	Code    int               `json:"code"`
	Data    string            `json:"data"`
	Headers map[string]string `json:"headers"`
}

type mockResponseMeta struct {
	Disabled   bool              `json:"disabled"`
	Path       string            `json:"path"`
	Method     string            `json:"method"`
	IgnoreCase bool              `json:"ignore_case"`
	Code       int               `json:"code"`
	Body       string            `json:"body"`
	Headers    map[string]string `json:"headers"`

	origin listField // the classic field a mock made from method_actions comes from
}

type cacheMeta struct {
	Disabled               bool   `json:"disabled"`
	Method                 string `json:"method"`
	Path                   string `json:"path"`
	CacheKeyRegex          string `json:"cache_key_regex"`
	CacheOnlyResponseCodes []int  `json:"cache_response_codes"`
	Timeout                int64  `json:"timeout"`
}

type templateMeta struct {
	Disabled     bool   `json:"disabled"`
	Path         string `json:"path"`
	Method       string `json:"method"`
	TemplateData struct {
		Input          string `json:"input_type"`
		Mode           string `json:"template_mode"`
		EnableSession  bool   `json:"enable_session"`
		TemplateSource string `json:"template_source"`
	} `json:"template_data"`
}

type headerInjection struct {
	Disabled      bool              `json:"disabled"`
	Path          string            `json:"path"`
	Method        string            `json:"method"`
	DeleteHeaders []string          `json:"delete_headers"`
	AddHeaders    map[string]string `json:"add_headers"`
}

type hardTimeoutMeta struct {
	Disabled bool   `json:"disabled"`
	Path     string `json:"path"`
	Method   string `json:"method"`
	TimeOut  int    `json:"timeout"`
}

type circuitBreakerMeta struct {
	Disabled             bool    `json:"disabled"`
	Path                 string  `json:"path"`
	Method               string  `json:"method"`
	ThresholdPercent     float64 `json:"threshold_percent"`
	Samples              int64   `json:"samples"`
	ReturnToServiceAfter int     `json:"return_to_service_after"`
	DisableHalfOpenState bool    `json:"disable_half_open_state"`
}

type urlRewriteMeta struct {
	Disabled     bool                `json:"disabled"`
	Path         string              `json:"path"`
	Method       string              `json:"method"`
	MatchPattern string              `json:"match_pattern"`
	RewriteTo    string              `json:"rewrite_to"`
	Triggers     []urlRewriteTrigger `json:"triggers"`
}

type urlRewriteTrigger struct {
	On      string `json:"on"`
	Options struct {
		HeaderMatches         map[string]regexMatch `json:"header_matches"`
		QueryValMatches       map[string]regexMatch `json:"query_val_matches"`
		PathPartMatches       map[string]regexMatch `json:"path_part_matches"`
		SessionMetaMatches    map[string]regexMatch `json:"session_meta_matches"`
		RequestContextMatches map[string]regexMatch `json:"request_context_matches"`
		PayloadMatches        regexMatch            `json:"payload_matches"`
	} `json:"options"`
	RewriteTo string `json:"rewrite_to"`
}

type regexMatch struct {
	MatchPattern string `json:"match_rx"`
	Reverse      bool   `json:"reverse"`
}

type virtualMeta struct {
	Disabled             bool   `json:"disabled"`
	Path                 string `json:"path"`
	Method               string `json:"method"`
	ResponseFunctionName string `json:"response_function_name"`
	FunctionSourceType   string `json:"function_source_type"`
	FunctionSourceURI    string `json:"function_source_uri"`
	UseSession           bool   `json:"use_session"`
	ProxyOnError         bool   `json:"proxy_on_error"`
}

type sizeLimitMeta struct {
	Disabled  bool   `json:"disabled"`
	Path      string `json:"path"`
	Method    string `json:"method"`
	SizeLimit int64  `json:"size_limit"`
}

type methodTransform struct {
	Disabled bool   `json:"disabled"`
	Path     string `json:"path"`
	Method   string `json:"method"`
	ToMethod string `json:"to_method"`
}

type validateJSONMeta struct {
	Disabled          bool           `json:"disabled"`
	Path              string         `json:"path"`
	Method            string         `json:"method"`
	Schema            map[string]any `json:"schema"`
	SchemaB64         string         `json:"schema_b64"`
	ErrorResponseCode int            `json:"error_response_code"`
}

type goPluginMeta struct {
	Disabled   bool   `json:"disabled"`
	Path       string `json:"path"`
	Method     string `json:"method"`
	PluginPath string `json:"plugin_path"`
	SymbolName string `json:"func_name"`
}

type endpointRateLimit struct {
	Disabled bool    `json:"disabled"`
	Path     string  `json:"path"`
	Method   string  `json:"method"`
	Rate     float64 `json:"rate"`
	Per      float64 `json:"per"`
}

type responseProcessor struct {
	Name    string `json:"name"`
	Options any    `json:"options"`
}

type providerConfig struct {
	Name          string         `json:"name"`
	StorageEngine string         `json:"storage_engine"`
	Meta          map[string]any `json:"meta"`
}
