module conformance

go 1.19

require market v0.0.0

replace market => ../../../go
