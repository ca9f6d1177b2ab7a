/* tests/preload/t_dlreuse.sh's first library: fa(f) calls f from a frame whose CFA is rsp + 16 (rbp
 * untouched). The call sits at offset 0x20 of fa, as fb's does in dlreuse_rbp.S, so that the
 * two libraries, loaded one after the other at one address, put one return address in two
 * frames of different rules. */
	.text
	.globl fa
	.type fa, @function
fa:	.cfi_startproc
	sub $8, %rsp
	.cfi_def_cfa_offset 16
	.p2align 5
	call *%rdi
	add $8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fa, .-fa
	.p2align 6
	.section .note.GNU-stack,"",@progbits
