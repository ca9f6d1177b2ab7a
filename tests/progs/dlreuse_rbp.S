/* tests/preload/t_dlreuse.sh's second library: fb(f) calls f from a frame whose CFA is rbp + 16, 256
 * bytes below rsp + 16, with the call at offset 0x20 of fb, as fa's in dlreuse_rsp.S. */
	.text
	.globl fb
	.type fb, @function
fb:	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	sub $256, %rsp
	xor %eax, %eax
	mov $32, %ecx
1:	mov %rax, -264(%rbp,%rcx,8)
	sub $1, %ecx
	jnz 1b
	.p2align 5
	call *%rdi
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fb, .-fb
	.p2align 6
	.section .note.GNU-stack,"",@progbits
