/* No code: a package that declares a function without a body (asmcgocall, direct.go) needs an
 * assembly file for Go to accept it, and in a cgo package the C compiler assembles it.  The
 * note keeps the program's stack non-executable (an object without it makes the linker assume
 * an executable stack). */
#if defined(__ELF__)
.section .note.GNU-stack,"",%progbits
#endif
