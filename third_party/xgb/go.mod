module github.com/jezek/xgb

go 1.11
