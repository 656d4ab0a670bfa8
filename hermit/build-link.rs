// Shared by the Hermit programs (their build.rs): link the kernel that
// scripts/setup-hermit built (HERMIT_LIB_DIR holds its libhermit.a).
fn main() {
    println!("cargo:rerun-if-env-changed=HERMIT_LIB_DIR");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("hermit") {
        return;
    }
    let Ok(dir) = std::env::var("HERMIT_LIB_DIR") else {
        panic!("HERMIT_LIB_DIR: the folder of the kernel's libhermit.a (scripts/setup-hermit sets it)");
    };
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=static=hermit");
    println!("cargo:rerun-if-changed={dir}/libhermit.a");
}
