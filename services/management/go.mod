module github.com/gatehouse/gatehouse/services/management

go 1.26.0

require (
	github.com/gatehouse/gatehouse/gen v0.0.0
	github.com/gatehouse/gatehouse/pkg v0.0.0
	github.com/getkin/kin-openapi v0.152.0
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.32.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.etcd.io/bbolt v1.5.0
	go.yaml.in/yaml/v3 v3.0.6
	google.golang.org/genproto/googleapis/api v0.0.0-20261019180522-ce908d29299b
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/go-openapi/jsonpointer v1.0.1 // indirect
	github.com/goccy/go-json v0.12.0 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/oasdiff/yaml v0.1.1 // indirect
	github.com/oasdiff/yaml3 v0.0.14 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261012220534-4341edf3f941 // indirect
)

replace github.com/gatehouse/gatehouse/gen => ../../gen

replace github.com/gatehouse/gatehouse/pkg => ../../pkg
