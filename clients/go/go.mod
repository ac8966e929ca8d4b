module github.com/markethq/market/clients/go

go 1.19
