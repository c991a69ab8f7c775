module taskbox.example/stats

go 1.27
