//! oscycles' Hermit loader: see Cargo.toml. Messages go to the first serial
//! port (where the kernel's log follows); a failure prints its reason there
//! and ends QEMU through isa-debug-exit with status 255.

#![no_std]
#![no_main]

extern crate alloc;

mod entry;
mod fdt;
mod heap;
mod multiboot;
mod serial;

use alloc::boxed::Box;
use alloc::format;
use core::mem::MaybeUninit;
use hermit_entry::boot_info::{BootInfo, HardwareInfo, PlatformInfo, RawBootInfo, SerialPortBase};
use hermit_entry::elf::{KernelObject, LoadedKernel};

const COM1: u16 = 0x3f8;
const TWO_MIB: u64 = 2 << 20;
/// What the entry maps one to one: the kernel must lie below.
const MAPPED: u64 = 1 << 30;
/// The kernel's boot stack (its KERNEL_STACK_SIZE): the kernel is entered
/// with the stack pointer at its start and moves it to its top itself.
const KERNEL_STACK: usize = 0x8000;

unsafe extern "C" {
    static __bss_end: u8;
}

/// Called by the entry in long mode with the multiboot information's address.
#[unsafe(no_mangle)]
extern "C" fn loader_main(mb_info: u32) -> ! {
    // SAFETY: the multiboot loader passed this address (identity mapped).
    let mb = unsafe { multiboot::Info::at(u64::from(mb_info)) };
    let Some(module) = mb.first_module() else { fail("no Hermit program: QEMU's -initrd gives it") };
    let regions = mb.memory();
    // The program goes above everything the loader and QEMU placed.
    // A symbol of the linker script: only its address is taken.
    let bss_end = core::ptr::addr_of!(__bss_end) as u64;
    let above = module.end.max(bss_end).max(mb.highest_used());
    let elf = module.bytes();
    let object = KernelObject::parse(elf).unwrap_or_else(|e| fail(&format!("the Hermit program does not parse: {e}")));
    let start = object.start_addr().unwrap_or_else(|| above.next_multiple_of(TWO_MIB));
    let size = object.mem_size() as u64;
    let ram_end = regions.iter().map(|r| r.0 + r.1).max().unwrap_or(0);
    if start < above || start + size > MAPPED.min(ram_end) {
        fail(&format!("no room for the program ({size:#x} bytes at {start:#x}; RAM ends at {ram_end:#x}, loader data at {above:#x})"));
    }
    // SAFETY: [start, start + size) is RAM above all the loader uses,
    // mapped one to one, and nothing else refers to it.
    let memory = unsafe { core::slice::from_raw_parts_mut(start as *mut MaybeUninit<u8>, size as usize) };
    let LoadedKernel { load_info, entry_point } = object.load_kernel(memory, start);
    let command_line = mb.command_line();
    let fdt = fdt::for_hermit(&regions, command_line);
    let boot_info = BootInfo {
        hardware_info: HardwareInfo {
            phys_addr_range: 0..0,
            serial_port_base: SerialPortBase::new(COM1),
            device_tree: core::num::NonZeroU64::new(fdt.as_ptr() as u64),
        },
        load_info,
        platform_info: PlatformInfo::Multiboot {
            command_line,
            multiboot_info_addr: core::num::NonZeroU64::new(u64::from(mb_info)).unwrap_or_else(|| fail("no multiboot information")),
        },
    };
    let raw: &'static RawBootInfo = Box::leak(Box::new(RawBootInfo::from(boot_info)));
    let stack = heap::zeroed_pages(KERNEL_STACK);
    // SAFETY: the kernel's entry (hermit_entry::Entry: boot info in rdi,
    // CPU number in esi) on its boot stack; it never returns.
    unsafe {
        core::arch::asm!(
            "mov rsp, {stack}",
            "xor ebp, ebp",
            "jmp {entry}",
            stack = in(reg) stack,
            entry = in(reg) entry_point,
            in("rdi") raw as *const RawBootInfo,
            in("esi") 0u32,
            options(noreturn)
        )
    }
}

/// Says why on the serial port and ends QEMU (isa-debug-exit, status 255).
fn fail(why: &str) -> ! {
    serial::write(COM1, "oscycles-hermit-loader: ");
    serial::write(COM1, why);
    serial::write(COM1, "\n");
    // SAFETY: port I/O to QEMU's isa-debug-exit device (absent: ignored).
    unsafe { core::arch::asm!("out dx, al", in("dx") 0xf4u16, in("al") 0x7fu8, options(nomem, nostack)) };
    loop {
        // SAFETY: halting with interrupts off ends here for good.
        unsafe { core::arch::asm!("cli", "hlt", options(nomem, nostack)) };
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    fail(&format!("panic: {info}"))
}
