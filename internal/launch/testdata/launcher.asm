# The launcher that internal/launch writes to a memfd (launcherCode in
# launcher.go holds these instructions, assembled; TestLauncherCode
# assembles this file with GNU as and compares). x86-64 Linux, no libc,
# position-independent, one read-execute segment.
#
# Started as: launcher PATH ARGV0 ARGV1 ... with fd 3 the read end of the
# go-ahead pipe and fd 4 the write end of the error pipe. It marks fd 4
# close-on-exec, writes 'R' to it (ready), blocks reading one byte from fd 3
# (the go-ahead; EOF means the parent gave up: exit 127), closes fd 3 and
# executes PATH with ARGV0 ARGV1 ... and its own environment. Should execve
# fail, it writes errno as one byte to fd 4 and exits 127 for ENOENT, 126
# otherwise, as a shell does.
	.text
	.globl _start
_start:
	mov	(%rsp), %r12		# argc
	lea	8(%rsp), %r13		# argv
	lea	16(%rsp,%r12,8), %r14	# envp: after argv's NULL
	mov	$72, %eax		# fcntl(4, F_SETFD, FD_CLOEXEC)
	mov	$4, %edi
	mov	$2, %esi
	mov	$1, %edx
	syscall
	push	$0x52			# 'R', and the byte buffer below
	mov	$1, %eax		# write(4, "R", 1)
	mov	$4, %edi
	mov	%rsp, %rsi
	mov	$1, %edx
	syscall
	cmp	$1, %rax
	jne	gaveup
	cmp	$2, %r12		# no PATH: nothing to execute
	jb	gaveup
again:
	xor	%eax, %eax		# read(3, buf, 1)
	mov	$3, %edi
	mov	%rsp, %rsi
	mov	$1, %edx
	syscall
	cmp	$-4, %rax		# EINTR
	je	again
	cmp	$1, %rax
	jne	gaveup
	mov	$3, %eax		# close(3)
	mov	$3, %edi
	syscall
	mov	$59, %eax		# execve(argv[1], &argv[2], envp)
	mov	8(%r13), %rdi
	lea	16(%r13), %rsi
	mov	%r14, %rdx
	syscall
	neg	%rax			# errno
	mov	%rax, %rbx
	mov	%al, (%rsp)
	mov	$1, %eax		# write(4, &errno, 1)
	mov	$4, %edi
	mov	%rsp, %rsi
	mov	$1, %edx
	syscall
	mov	$126, %edi
	cmp	$2, %rbx		# ENOENT
	jne	exit
gaveup:
	mov	$127, %edi
exit:
	mov	$231, %eax		# exit_group
	syscall
