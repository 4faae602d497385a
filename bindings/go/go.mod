module tensorlife/bindings/go

go 1.19
