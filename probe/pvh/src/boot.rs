//! The PVH entry: from QEMU's 32-bit protected mode to Rust in long mode.
//!
//! QEMU's `-kernel` loader finds the `XEN_ELFNOTE_PHYS32_ENTRY` note,
//! loads the ELF at its link address and enters `pvh_start` in 32-bit
//! protected mode, paging off, interrupts off, with `%ebx` holding the
//! physical address of the `hvm_start_info` structure (the x86/HVM
//! direct boot ABI).  `pvh_start` clears `.bss`, identity-maps the first
//! 4 GiB with 2 MiB pages (RAM below 4 GiB, the ACPI tables and the local
//! APIC all live there), loads a GDT with a 64-bit code segment, turns on
//! PAE and long mode, and calls [`pvh_main`](crate::pvh_main) with the
//! start info address on a stack in `.bss`.

use core::arch::global_asm;

/// `XEN_ELFNOTE_PHYS32_ENTRY`: the note type of the 32-bit entry point.
const XEN_ELFNOTE_PHYS32_ENTRY: u32 = 18;

/// Bytes of the boot processor's stack.
pub const STACK_BYTES: usize = 256 * 1024;

global_asm!(
    // The note: name "Xen", descriptor the 32-bit entry address.  QEMU
    // reads 8 bytes of descriptor from ELF64 files, so it is a quad; the
    // section stays 4-aligned so that QEMU's note walk (which aligns the
    // name to the segment's alignment) and the ELF rules agree.
    ".pushsection .note.Xen, \"a\"",
    ".p2align 2",
    ".long 4",
    ".long 8",
    ".long {note_type}",
    ".asciz \"Xen\"",
    ".quad pvh_start",
    ".popsection",

    ".pushsection .text.pvh_start, \"ax\"",
    ".code32",
    ".globl pvh_start",
    "pvh_start:",
    "    cli",
    "    cld",
    "    movl %ebx, %esi",
    // Clear .bss (page tables, stack, heap, statics).
    "    movl $__bss_start, %edi",
    "    movl $__bss_end, %ecx",
    "    subl %edi, %ecx",
    "    xorl %eax, %eax",
    "    rep stosb",
    // PML4[0] -> PDPT; PDPT[0..4] -> the four page directories.
    "    movl $pvh_pdpt, %eax",
    "    orl $3, %eax",
    "    movl %eax, pvh_pml4",
    "    movl $pvh_pd, %eax",
    "    orl $3, %eax",
    "    xorl %ecx, %ecx",
    "1:  movl %eax, pvh_pdpt(,%ecx,8)",
    "    addl $4096, %eax",
    "    incl %ecx",
    "    cmpl $4, %ecx",
    "    jb 1b",
    // 2048 entries of 2 MiB pages: present, writable, large.
    "    xorl %ecx, %ecx",
    "2:  movl %ecx, %eax",
    "    shll $21, %eax",
    "    orl $0x83, %eax",
    "    movl %eax, pvh_pd(,%ecx,8)",
    "    incl %ecx",
    "    cmpl $2048, %ecx",
    "    jb 2b",
    // PAE, the page tables, long mode enable (EFER.LME), paging.
    "    movl %cr4, %eax",
    "    orl $0x20, %eax",
    "    movl %eax, %cr4",
    "    movl $pvh_pml4, %eax",
    "    movl %eax, %cr3",
    "    movl $0xc0000080, %ecx",
    "    rdmsr",
    "    orl $0x100, %eax",
    "    wrmsr",
    "    movl %cr0, %eax",
    "    orl $0x80000001, %eax",
    "    movl %eax, %cr0",
    "    lgdt pvh_gdt_ptr",
    "    ljmpl $0x08, $3f",
    ".code64",
    "3:  movw $0x10, %ax",
    "    movw %ax, %ds",
    "    movw %ax, %es",
    "    movw %ax, %ss",
    "    movw %ax, %fs",
    "    movw %ax, %gs",
    "    movl $pvh_stack_top, %esp",
    "    movl %esi, %edi",
    "    call pvh_main",
    "4:  cli",
    "    hlt",
    "    jmp 4b",
    ".popsection",

    // Null, 64-bit code (0x08), data (0x10).
    ".pushsection .rodata.pvh_gdt, \"a\"",
    ".p2align 3",
    "pvh_gdt:",
    "    .quad 0",
    "    .quad 0x00af9a000000ffff",
    "    .quad 0x00cf92000000ffff",
    "pvh_gdt_ptr:",
    "    .word 23",
    "    .quad pvh_gdt",
    ".popsection",

    ".pushsection .bss.pvh_boot, \"aw\", @nobits",
    ".p2align 12",
    "pvh_pml4: .skip 4096",
    "pvh_pdpt: .skip 4096",
    "pvh_pd: .skip 4 * 4096",
    ".p2align 4",
    "pvh_stack: .skip {stack}",
    "pvh_stack_top:",
    ".popsection",
    note_type = const XEN_ELFNOTE_PHYS32_ENTRY,
    stack = const STACK_BYTES,
    options(att_syntax)
);
