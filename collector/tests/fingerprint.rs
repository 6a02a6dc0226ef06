//! The hardware fingerprint: stable on one machine, sensitive to every hashed component, blind
//! to hostname, frequency and kernel.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches fail loudly

use benchgate_collector::{HardwareProfile, RunnerImage, RustcInfo};

fn rustc() -> RustcInfo {
    RustcInfo::parse("rustc 1.95.0 (59807616e 2026-04-14)\nbinary: rustc\nhost: x86_64-unknown-linux-gnu\nrelease: 1.95.0\n")
        .unwrap()
}

fn sample_profile() -> HardwareProfile {
    HardwareProfile {
        cpu_arch: "x86_64".into(),
        cpu_vendor: "AuthenticAMD".into(),
        cpu_brand: "AMD EPYC 7763 64-Core Processor".into(),
        physical_cores: 2,
        logical_cores: 4,
        memory_gib: 16,
        cpu_features: vec!["avx".into(), "avx2".into(), "sse4.2".into()],
        os_name: "Ubuntu".into(),
        os_major_version: "24".into(),
        runner_image: Some("ubuntu24".into()),
        runner_image_version: Some("20241124.1.0".into()),
        rustc_version: "rustc 1.95.0 (59807616e 2026-04-14)".into(),
        host_triple: "x86_64-unknown-linux-gnu".into(),
        hostname: Some("fv-az123".into()),
        cpu_frequency_mhz: Some(3243),
        kernel_version: Some("6.8.0-1017-azure".into()),
        os_version: Some("24.04".into()),
    }
}

#[test]
fn the_same_machine_gives_the_same_hash_twice() {
    let runner = RunnerImage::default();
    let first = HardwareProfile::detect(&runner, &rustc()).unwrap();
    let second = HardwareProfile::detect(&runner, &rustc()).unwrap();
    assert_eq!(first.fingerprint(), second.fingerprint());
    assert!(first.logical_cores >= 1 && first.memory_gib >= 1);
    assert_eq!(first.host_triple, "x86_64-unknown-linux-gnu");
}

#[test]
fn changing_any_hashed_component_changes_the_hash() {
    let base = sample_profile();
    type Edit = fn(&mut HardwareProfile);
    let edits: [(&str, Edit); 13] = [
        ("cpu_arch", |p| p.cpu_arch = "aarch64".into()),
        ("cpu_vendor", |p| p.cpu_vendor = "GenuineIntel".into()),
        ("cpu_brand", |p| p.cpu_brand = "AMD EPYC 9V74".into()),
        ("physical_cores", |p| p.physical_cores = 4),
        ("logical_cores", |p| p.logical_cores = 8),
        ("memory_gib", |p| p.memory_gib = 32),
        ("cpu_features", |p| p.cpu_features.push("avx512f".into())),
        ("os_name", |p| p.os_name = "Debian GNU/Linux".into()),
        ("os_major_version", |p| p.os_major_version = "22".into()),
        ("runner_image", |p| p.runner_image = Some("ubuntu22".into())),
        ("runner_image_version", |p| {
            p.runner_image_version = Some("20250101.1.0".into())
        }),
        ("rustc_version", |p| {
            p.rustc_version = "rustc 1.96.0 (aaaaaaaaa 2026-05-28)".into()
        }),
        ("host_triple", |p| {
            p.host_triple = "x86_64-unknown-linux-musl".into()
        }),
    ];
    let names: Vec<&str> = base
        .hashed_components()
        .iter()
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(
        names,
        edits.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        "every hashed component is tested"
    );
    let mut seen = std::collections::HashSet::from([base.fingerprint()]);
    for (name, edit) in edits {
        let mut changed = base.clone();
        edit(&mut changed);
        assert!(
            seen.insert(changed.fingerprint()),
            "changing {name} must change the fingerprint"
        );
        assert_eq!(changed.differences(&base).len(), 1, "{name}");
        assert_eq!(changed.differences(&base)[0].0, name);
    }
}

#[test]
fn hostname_frequency_and_kernel_do_not_change_the_hash() {
    let base = sample_profile();
    let mut other = base.clone();
    other.hostname = Some("fv-az999".into());
    other.cpu_frequency_mhz = Some(2445);
    other.kernel_version = Some("6.8.0-1021-azure".into());
    other.os_version = Some("24.04.1".into());
    assert_eq!(base.fingerprint(), other.fingerprint());
    assert!(base.differences(&other).is_empty());
}

#[test]
fn feature_lists_cannot_collide_by_concatenation() {
    let mut a = sample_profile();
    let mut b = sample_profile();
    a.cpu_brand = "AMD".into();
    a.os_name = "EPYC Linux".into();
    b.cpu_brand = "AMD EPYC".into();
    b.os_name = "Linux".into();
    assert_ne!(a.fingerprint(), b.fingerprint());
}

#[test]
fn rustc_output_without_a_host_line_is_refused() {
    assert!(RustcInfo::parse("rustc 1.95.0\nrelease: 1.95.0\n").is_err());
    assert!(RustcInfo::parse("").is_err());
    assert_eq!(rustc().version, "rustc 1.95.0 (59807616e 2026-04-14)");
}
