//! Writing to a 16550 serial port (QEMU's needs no set-up).

pub fn write(port: u16, s: &str) {
    for b in s.bytes() {
        // SAFETY: port I/O to the UART's transmit and status registers.
        unsafe {
            while {
                let status: u8;
                core::arch::asm!("in al, dx", out("al") status, in("dx") port + 5, options(nomem, nostack));
                status & 0x20 == 0
            } {}
            core::arch::asm!("out dx, al", in("dx") port, in("al") b, options(nomem, nostack));
        }
    }
}
