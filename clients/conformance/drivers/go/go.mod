module conformance

go 1.19

require github.com/markethq/market/clients/go v0.0.0

replace github.com/markethq/market/clients/go => ../../go
