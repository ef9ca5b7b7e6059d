package convert

// The per-operation middleware of x-tyk-api-gateway.middleware.operations, in the order of Tyk's structs.

// xOperation is the middleware of one operation.
type xOperation struct {
	Allow                    *xAllowance        `json:"allow,omitempty"`
	Block                    *xAllowance        `json:"block,omitempty"`
	IgnoreAuthentication     *xAllowance        `json:"ignoreAuthentication,omitempty"`
	Internal                 *xEnabled          `json:"internal,omitempty"`
	TransformRequestMethod   *xTransformMethod  `json:"transformRequestMethod,omitempty"`
	TransformRequestBody     *xTransformBody    `json:"transformRequestBody,omitempty"`
	TransformResponseBody    *xTransformBody    `json:"transformResponseBody,omitempty"`
	TransformRequestHeaders  *xTransformHeaders `json:"transformRequestHeaders,omitempty"`
	TransformResponseHeaders *xTransformHeaders `json:"transformResponseHeaders,omitempty"`
	URLRewrite               *xURLRewrite       `json:"urlRewrite,omitempty"`
	Cache                    *xCachePlugin      `json:"cache,omitempty"`
	EnforceTimeout           *xEnforceTimeout   `json:"enforceTimeout,omitempty"`
	ValidateRequest          *xValidateRequest  `json:"validateRequest,omitempty"`
	MockResponse             *xMockResponse     `json:"mockResponse,omitempty"`
	VirtualEndpoint          *xVirtualEndpoint  `json:"virtualEndpoint,omitempty"`
	PostPlugins              []xEndpointPlugin  `json:"postPlugins,omitempty"`
	CircuitBreaker           *xCircuitBreaker   `json:"circuitBreaker,omitempty"`
	TrackEndpoint            *xEnabled          `json:"trackEndpoint,omitempty"`
	DoNotTrackEndpoint       *xEnabled          `json:"doNotTrackEndpoint,omitempty"`
	RequestSizeLimit         *xRequestSizeLimit `json:"requestSizeLimit,omitempty"`
	RateLimit                *xRateLimit        `json:"rateLimit,omitempty"`
}

type xAllowance struct {
	Enabled    bool `json:"enabled"`
	IgnoreCase bool `json:"ignoreCase,omitempty"`
}

type xTransformMethod struct {
	Enabled  bool   `json:"enabled"`
	ToMethod string `json:"toMethod"`
}

type xTransformBody struct {
	Enabled bool    `json:"enabled"`
	Format  string  `json:"format"`
	Path    *string `json:"path,omitempty"`
	Body    *string `json:"body,omitempty"`
}

type xURLRewrite struct {
	Enabled   bool                 `json:"enabled"`
	Pattern   string               `json:"pattern"`
	RewriteTo string               `json:"rewriteTo"`
	Triggers  []xURLRewriteTrigger `json:"triggers,omitempty"`
}

type xURLRewriteTrigger struct {
	Condition string            `json:"condition"`
	Rules     []xURLRewriteRule `json:"rules,omitempty"`
	RewriteTo string            `json:"rewriteTo"`
}

type xURLRewriteRule struct {
	In      string  `json:"in"`
	Name    *string `json:"name,omitempty"` // every rule but requestBody names its header, parameter or key, even ""
	Pattern string  `json:"pattern"`
	Negate  bool    `json:"negate,omitempty"`
}

type xCachePlugin struct {
	Enabled            bool   `json:"enabled"`
	CacheByRegex       string `json:"cacheByRegex,omitempty"`
	CacheResponseCodes []int  `json:"cacheResponseCodes,omitempty"`
	Timeout            int64  `json:"timeout,omitempty"`
}

type xEnforceTimeout struct {
	Enabled bool `json:"enabled"`
	Value   int  `json:"value"`
}

type xValidateRequest struct {
	Enabled           bool `json:"enabled"`
	ErrorResponseCode int  `json:"errorResponseCode,omitempty"`
}

type xMockResponse struct {
	Enabled bool      `json:"enabled"`
	Code    int       `json:"code,omitempty"`
	Body    string    `json:"body,omitempty"`
	Headers []xHeader `json:"headers,omitempty"`
}

type xVirtualEndpoint struct {
	Enabled        bool    `json:"enabled"`
	FunctionName   string  `json:"functionName"`
	Path           *string `json:"path,omitempty"`
	Body           *string `json:"body,omitempty"`
	ProxyOnError   bool    `json:"proxyOnError,omitempty"`
	RequireSession bool    `json:"requireSession,omitempty"`
}

type xEndpointPlugin struct {
	Enabled      bool   `json:"enabled"`
	FunctionName string `json:"functionName"`
	Path         string `json:"path"`
}

type xCircuitBreaker struct {
	Enabled              bool    `json:"enabled"`
	Threshold            float64 `json:"threshold"`
	SampleSize           int64   `json:"sampleSize"`
	CoolDownPeriod       int     `json:"coolDownPeriod"`
	HalfOpenStateEnabled bool    `json:"halfOpenStateEnabled"`
}
