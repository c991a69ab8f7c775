module taskbox/sdk

go 1.21
