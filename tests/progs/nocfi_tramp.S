/* Code without unwind tables (no CFI), as hand-written assembly or a JIT has it: calls its
 * first argument with rbp set to its second, so the frame inside it is stepped by a guess. */
	.text
	.globl nocfi_tramp
	.type nocfi_tramp, @function
nocfi_tramp:
	push %rbp
	mov %rsi, %rbp
	call *%rdi
	pop %rbp
	ret
	.size nocfi_tramp, .-nocfi_tramp
	.section .note.GNU-stack,"",@progbits
