module example.com/decodeapp

go 1.19

require github.com/tensorlife/tensorlife/bindings/go v0.1.0

// There is no module server here: the consumer test points this at a copy of the module.
replace github.com/tensorlife/tensorlife/bindings/go => TENSORLIFE_GO_MODULE
