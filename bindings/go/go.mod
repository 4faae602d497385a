module github.com/tensorlife/tensorlife/bindings/go

go 1.19
