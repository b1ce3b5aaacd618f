module pairbench.example/worker

go 1.21
