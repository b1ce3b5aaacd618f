module example.com/pairbench/gobench

go 1.21
