module github.com/gatehouse/gatehouse/services/portal

go 1.26.0

replace github.com/gatehouse/gatehouse/gen => ../../gen

replace github.com/gatehouse/gatehouse/pkg => ../../pkg
