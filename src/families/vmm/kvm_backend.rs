//! The KVM backend: what serves /dev/kvm here: kvm_intel, kvm_amd, or a software layer such
//! as kvm_pvm; and whether this host is itself a guest (cpuid's hypervisor
//! bit and vendor), i.e. whether the KVM under test is nested.

use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
pub struct KvmBackend {
    /// kvm_intel, kvm_amd, kvm_pvm, or "unknown".
    pub module: String,
    /// Hardware (VMX/SVM) or software (PVM: no hardware virtualization under it).
    pub kind: &'static str,
    /// The hypervisor this host runs under, if any (cpuid leaf 0x40000000).
    pub host_hypervisor: Option<String>,
}

impl KvmBackend {
    pub fn nested(&self) -> bool {
        self.host_hypervisor.is_some()
    }
    pub fn describe(&self) -> String {
        format!(
            "{} ({}{})",
            self.module,
            self.kind,
            self.host_hypervisor.as_ref().map_or(", not nested".into(), |h| format!(", nested: this host is itself a guest of '{h}'"))
        )
    }
}

/// From the modules present (names under /sys/module) and the hypervisor vendor.
pub fn classify(modules: &[&str], host_hypervisor: Option<String>) -> KvmBackend {
    let (module, kind) = if modules.contains(&"kvm_pvm") {
        ("kvm_pvm", "software: PVM, no hardware virtualization extensions")
    } else if modules.contains(&"kvm_intel") {
        ("kvm_intel", "hardware: VMX")
    } else if modules.contains(&"kvm_amd") {
        ("kvm_amd", "hardware: SVM")
    } else {
        ("unknown", "unknown")
    };
    KvmBackend { module: module.into(), kind, host_hypervisor }
}

pub fn detect() -> KvmBackend {
    let present: Vec<&str> =
        ["kvm_pvm", "kvm_intel", "kvm_amd"].into_iter().filter(|m| Path::new(&format!("/sys/module/{m}")).exists()).collect();
    classify(&present, crate::measure::arch::hypervisor())
}

/// The CPU vendor string (cpuid leaf 0).
#[cfg(target_arch = "x86_64")]
pub fn cpu_vendor() -> String {
    let (_, ebx, ecx, edx) = crate::measure::arch::cpuid(0, 0);
    let b: Vec<u8> = [ebx, edx, ecx].iter().flat_map(|x| x.to_le_bytes()).collect();
    String::from_utf8_lossy(&b).into_owned()
}

/// The CPU as its MIDR names it (no cpuid off x86).
#[cfg(not(target_arch = "x86_64"))]
pub fn cpu_vendor() -> String {
    crate::measure::arch::brand_string().unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_software_layer_wins_over_the_hardware_modules_beside_it() {
        let l = classify(&["kvm_pvm", "kvm_intel"], Some("KVMKVMKVM".into()));
        assert_eq!(l.module, "kvm_pvm");
        assert!(l.kind.starts_with("software"));
        assert!(l.nested());
        assert!(l.describe().contains("nested"));
        assert_eq!(classify(&["kvm_amd"], None).kind, "hardware: SVM");
        assert!(!classify(&[], None).nested());
    }
}
