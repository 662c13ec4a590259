/* ubt_check_registers(use_avx): see register_check.c. Returns 0 when the
 * stop flag was seen with every register intact, else k+1 for general
 * register k, 100+n for vector register n, 200 for MXCSR, 201 for the
 * direction flag. No calls inside the loop: nothing but an injector may
 * change these registers. */
        .intel_syntax noprefix
        .text
        .globl ubt_check_registers
        .type ubt_check_registers, @function
ubt_check_registers:
        push rbx
        push rbp
        push r12
        push r13
        push r14
        push r15
        sub rsp, 24
        stmxcsr dword ptr [rsp]          /* callee-saved control bits */
        mov dword ptr [rsp + 4], 0x7f80  /* round toward zero */
        ldmxcsr dword ptr [rsp + 4]
        mov eax, edi
        test eax, eax
        jz .Lsse_load
        vmovdqa ymm0, ymmword ptr [rip + .Lvectors + 0]
        vmovdqa ymm1, ymmword ptr [rip + .Lvectors + 32]
        vmovdqa ymm2, ymmword ptr [rip + .Lvectors + 64]
        vmovdqa ymm3, ymmword ptr [rip + .Lvectors + 96]
        vmovdqa ymm4, ymmword ptr [rip + .Lvectors + 128]
        vmovdqa ymm5, ymmword ptr [rip + .Lvectors + 160]
        vmovdqa ymm6, ymmword ptr [rip + .Lvectors + 192]
        vmovdqa ymm7, ymmword ptr [rip + .Lvectors + 224]
        vmovdqa ymm8, ymmword ptr [rip + .Lvectors + 256]
        vmovdqa ymm9, ymmword ptr [rip + .Lvectors + 288]
        vmovdqa ymm10, ymmword ptr [rip + .Lvectors + 320]
        vmovdqa ymm11, ymmword ptr [rip + .Lvectors + 352]
        vmovdqa ymm12, ymmword ptr [rip + .Lvectors + 384]
        vmovdqa ymm13, ymmword ptr [rip + .Lvectors + 416]
        vmovdqa ymm14, ymmword ptr [rip + .Lvectors + 448]
        jmp .Lgprs
.Lsse_load:
        movdqa xmm0, xmmword ptr [rip + .Lvectors + 0]
        movdqa xmm1, xmmword ptr [rip + .Lvectors + 32]
        movdqa xmm2, xmmword ptr [rip + .Lvectors + 64]
        movdqa xmm3, xmmword ptr [rip + .Lvectors + 96]
        movdqa xmm4, xmmword ptr [rip + .Lvectors + 128]
        movdqa xmm5, xmmword ptr [rip + .Lvectors + 160]
        movdqa xmm6, xmmword ptr [rip + .Lvectors + 192]
        movdqa xmm7, xmmword ptr [rip + .Lvectors + 224]
        movdqa xmm8, xmmword ptr [rip + .Lvectors + 256]
        movdqa xmm9, xmmword ptr [rip + .Lvectors + 288]
        movdqa xmm10, xmmword ptr [rip + .Lvectors + 320]
        movdqa xmm11, xmmword ptr [rip + .Lvectors + 352]
        movdqa xmm12, xmmword ptr [rip + .Lvectors + 384]
        movdqa xmm13, xmmword ptr [rip + .Lvectors + 416]
        movdqa xmm14, xmmword ptr [rip + .Lvectors + 448]
.Lgprs:
        mov dword ptr [rsp + 8], edi     /* use_avx, for the loop */
        mov rbx, 285212672
        mov rcx, -286331153
        mov rdx, 287449634
        mov rsi, -288568115
        mov rdi, 289686596
        mov rbp, -290805077
        mov r8, 291923558
        mov r9, -293042039
        mov r10, 294160520
        mov r11, -295279001
        mov r12, 296397482
        mov r13, -297515963
        mov r14, 298634444
        mov r15, -299752925
        std
.Lloop:
        cmp dword ptr [rip + ubt_register_check_stop], 0
        jne .Lintact
        cmp rbx, 285212672
        jne .Lbad_gpr0
        cmp rcx, -286331153
        jne .Lbad_gpr1
        cmp rdx, 287449634
        jne .Lbad_gpr2
        cmp rsi, -288568115
        jne .Lbad_gpr3
        cmp rdi, 289686596
        jne .Lbad_gpr4
        cmp rbp, -290805077
        jne .Lbad_gpr5
        cmp r8, 291923558
        jne .Lbad_gpr6
        cmp r9, -293042039
        jne .Lbad_gpr7
        cmp r10, 294160520
        jne .Lbad_gpr8
        cmp r11, -295279001
        jne .Lbad_gpr9
        cmp r12, 296397482
        jne .Lbad_gpr10
        cmp r13, -297515963
        jne .Lbad_gpr11
        cmp r14, 298634444
        jne .Lbad_gpr12
        cmp r15, -299752925
        jne .Lbad_gpr13
        pushfq
        pop rax
        test eax, 0x400
        jz .Lbad_df
        stmxcsr dword ptr [rsp + 12]
        cmp dword ptr [rsp + 12], 0x7f80
        jne .Lbad_mxcsr
        cmp dword ptr [rsp + 8], 0
        je .Lsse_check
        vpcmpeqb ymm15, ymm0, ymmword ptr [rip + .Lvectors + 0]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec0
        vpcmpeqb ymm15, ymm1, ymmword ptr [rip + .Lvectors + 32]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec1
        vpcmpeqb ymm15, ymm2, ymmword ptr [rip + .Lvectors + 64]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec2
        vpcmpeqb ymm15, ymm3, ymmword ptr [rip + .Lvectors + 96]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec3
        vpcmpeqb ymm15, ymm4, ymmword ptr [rip + .Lvectors + 128]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec4
        vpcmpeqb ymm15, ymm5, ymmword ptr [rip + .Lvectors + 160]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec5
        vpcmpeqb ymm15, ymm6, ymmword ptr [rip + .Lvectors + 192]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec6
        vpcmpeqb ymm15, ymm7, ymmword ptr [rip + .Lvectors + 224]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec7
        vpcmpeqb ymm15, ymm8, ymmword ptr [rip + .Lvectors + 256]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec8
        vpcmpeqb ymm15, ymm9, ymmword ptr [rip + .Lvectors + 288]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec9
        vpcmpeqb ymm15, ymm10, ymmword ptr [rip + .Lvectors + 320]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec10
        vpcmpeqb ymm15, ymm11, ymmword ptr [rip + .Lvectors + 352]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec11
        vpcmpeqb ymm15, ymm12, ymmword ptr [rip + .Lvectors + 384]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec12
        vpcmpeqb ymm15, ymm13, ymmword ptr [rip + .Lvectors + 416]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec13
        vpcmpeqb ymm15, ymm14, ymmword ptr [rip + .Lvectors + 448]
        vpmovmskb eax, ymm15
        cmp eax, -1
        jne .Lbad_vec14
        jmp .Lnext
.Lsse_check:
        movdqa xmm15, xmm0
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 0]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec0
        movdqa xmm15, xmm1
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 32]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec1
        movdqa xmm15, xmm2
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 64]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec2
        movdqa xmm15, xmm3
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 96]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec3
        movdqa xmm15, xmm4
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 128]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec4
        movdqa xmm15, xmm5
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 160]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec5
        movdqa xmm15, xmm6
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 192]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec6
        movdqa xmm15, xmm7
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 224]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec7
        movdqa xmm15, xmm8
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 256]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec8
        movdqa xmm15, xmm9
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 288]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec9
        movdqa xmm15, xmm10
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 320]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec10
        movdqa xmm15, xmm11
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 352]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec11
        movdqa xmm15, xmm12
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 384]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec12
        movdqa xmm15, xmm13
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 416]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec13
        movdqa xmm15, xmm14
        pcmpeqb xmm15, xmmword ptr [rip + .Lvectors + 448]
        pmovmskb eax, xmm15
        cmp eax, 0xffff
        jne .Lbad_vec14
.Lnext:
        inc qword ptr [rip + ubt_register_check_loops]
        jmp .Lloop
.Lbad_gpr0:
        mov eax, 1
        jmp .Lout
.Lbad_gpr1:
        mov eax, 2
        jmp .Lout
.Lbad_gpr2:
        mov eax, 3
        jmp .Lout
.Lbad_gpr3:
        mov eax, 4
        jmp .Lout
.Lbad_gpr4:
        mov eax, 5
        jmp .Lout
.Lbad_gpr5:
        mov eax, 6
        jmp .Lout
.Lbad_gpr6:
        mov eax, 7
        jmp .Lout
.Lbad_gpr7:
        mov eax, 8
        jmp .Lout
.Lbad_gpr8:
        mov eax, 9
        jmp .Lout
.Lbad_gpr9:
        mov eax, 10
        jmp .Lout
.Lbad_gpr10:
        mov eax, 11
        jmp .Lout
.Lbad_gpr11:
        mov eax, 12
        jmp .Lout
.Lbad_gpr12:
        mov eax, 13
        jmp .Lout
.Lbad_gpr13:
        mov eax, 14
        jmp .Lout
.Lbad_vec0:
        mov eax, 100
        jmp .Lout
.Lbad_vec1:
        mov eax, 101
        jmp .Lout
.Lbad_vec2:
        mov eax, 102
        jmp .Lout
.Lbad_vec3:
        mov eax, 103
        jmp .Lout
.Lbad_vec4:
        mov eax, 104
        jmp .Lout
.Lbad_vec5:
        mov eax, 105
        jmp .Lout
.Lbad_vec6:
        mov eax, 106
        jmp .Lout
.Lbad_vec7:
        mov eax, 107
        jmp .Lout
.Lbad_vec8:
        mov eax, 108
        jmp .Lout
.Lbad_vec9:
        mov eax, 109
        jmp .Lout
.Lbad_vec10:
        mov eax, 110
        jmp .Lout
.Lbad_vec11:
        mov eax, 111
        jmp .Lout
.Lbad_vec12:
        mov eax, 112
        jmp .Lout
.Lbad_vec13:
        mov eax, 113
        jmp .Lout
.Lbad_vec14:
        mov eax, 114
        jmp .Lout
.Lbad_mxcsr:
        mov eax, 200
        jmp .Lout
.Lbad_df:
        mov eax, 201
        jmp .Lout
.Lintact:
        xor eax, eax
.Lout:
        cld
        ldmxcsr dword ptr [rsp]
        cmp dword ptr [rsp + 8], 0
        je .Lno_vzeroupper
        vzeroupper
.Lno_vzeroupper:
        add rsp, 24
        pop r15
        pop r14
        pop r13
        pop r12
        pop rbp
        pop rbx
        ret
        .size ubt_check_registers, .-ubt_check_registers

        .section .rodata
        .p2align 5
.Lvectors:
        .byte 5, 16, 27, 38, 49, 60, 71, 82, 93, 104, 115, 126, 137, 148, 159, 170, 181, 192, 203, 214, 225, 236, 247, 2, 13, 24, 35, 46, 57, 68, 79, 90
        .byte 42, 53, 64, 75, 86, 97, 108, 119, 130, 141, 152, 163, 174, 185, 196, 207, 218, 229, 240, 251, 6, 17, 28, 39, 50, 61, 72, 83, 94, 105, 116, 127
        .byte 79, 90, 101, 112, 123, 134, 145, 156, 167, 178, 189, 200, 211, 222, 233, 244, 255, 10, 21, 32, 43, 54, 65, 76, 87, 98, 109, 120, 131, 142, 153, 164
        .byte 116, 127, 138, 149, 160, 171, 182, 193, 204, 215, 226, 237, 248, 3, 14, 25, 36, 47, 58, 69, 80, 91, 102, 113, 124, 135, 146, 157, 168, 179, 190, 201
        .byte 153, 164, 175, 186, 197, 208, 219, 230, 241, 252, 7, 18, 29, 40, 51, 62, 73, 84, 95, 106, 117, 128, 139, 150, 161, 172, 183, 194, 205, 216, 227, 238
        .byte 190, 201, 212, 223, 234, 245, 0, 11, 22, 33, 44, 55, 66, 77, 88, 99, 110, 121, 132, 143, 154, 165, 176, 187, 198, 209, 220, 231, 242, 253, 8, 19
        .byte 227, 238, 249, 4, 15, 26, 37, 48, 59, 70, 81, 92, 103, 114, 125, 136, 147, 158, 169, 180, 191, 202, 213, 224, 235, 246, 1, 12, 23, 34, 45, 56
        .byte 8, 19, 30, 41, 52, 63, 74, 85, 96, 107, 118, 129, 140, 151, 162, 173, 184, 195, 206, 217, 228, 239, 250, 5, 16, 27, 38, 49, 60, 71, 82, 93
        .byte 45, 56, 67, 78, 89, 100, 111, 122, 133, 144, 155, 166, 177, 188, 199, 210, 221, 232, 243, 254, 9, 20, 31, 42, 53, 64, 75, 86, 97, 108, 119, 130
        .byte 82, 93, 104, 115, 126, 137, 148, 159, 170, 181, 192, 203, 214, 225, 236, 247, 2, 13, 24, 35, 46, 57, 68, 79, 90, 101, 112, 123, 134, 145, 156, 167
        .byte 119, 130, 141, 152, 163, 174, 185, 196, 207, 218, 229, 240, 251, 6, 17, 28, 39, 50, 61, 72, 83, 94, 105, 116, 127, 138, 149, 160, 171, 182, 193, 204
        .byte 156, 167, 178, 189, 200, 211, 222, 233, 244, 255, 10, 21, 32, 43, 54, 65, 76, 87, 98, 109, 120, 131, 142, 153, 164, 175, 186, 197, 208, 219, 230, 241
        .byte 193, 204, 215, 226, 237, 248, 3, 14, 25, 36, 47, 58, 69, 80, 91, 102, 113, 124, 135, 146, 157, 168, 179, 190, 201, 212, 223, 234, 245, 0, 11, 22
        .byte 230, 241, 252, 7, 18, 29, 40, 51, 62, 73, 84, 95, 106, 117, 128, 139, 150, 161, 172, 183, 194, 205, 216, 227, 238, 249, 4, 15, 26, 37, 48, 59
        .byte 11, 22, 33, 44, 55, 66, 77, 88, 99, 110, 121, 132, 143, 154, 165, 176, 187, 198, 209, 220, 231, 242, 253, 8, 19, 30, 41, 52, 63, 74, 85, 96

        .section .note.GNU-stack,"",@progbits
