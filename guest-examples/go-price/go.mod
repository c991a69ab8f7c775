module taskbox.example/price

go 1.27
