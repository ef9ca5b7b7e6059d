module github.com/gatehouse/gatehouse/services/management

go 1.26.0

require (
	github.com/gatehouse/gatehouse/gen v0.0.0
	github.com/gatehouse/gatehouse/pkg v0.0.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.yaml.in/yaml/v3 v3.0.6
)

require golang.org/x/text v0.14.0 // indirect

replace github.com/gatehouse/gatehouse/gen => ../../gen

replace github.com/gatehouse/gatehouse/pkg => ../../pkg
