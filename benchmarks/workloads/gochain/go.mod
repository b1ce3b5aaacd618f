module example.com/pairbench/gochain

go 1.21
