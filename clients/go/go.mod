module market

go 1.19
