//! The hardware fingerprint: a stable hash of what makes two benchmark runs comparable (CPU,
//! cores, memory, CPU features, OS, runner image, compiler), never of what varies between
//! identical machines (hostname, clock frequency, kernel patch level).

use std::fmt;
use std::process::Command;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The hex SHA-256 of a [`HardwareProfile`]'s hashed components.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Fingerprint(String);

impl Fingerprint {
    /// Accepts 64 lower-case hex digits.
    pub fn parse(value: &str) -> Result<Self> {
        if value.len() == 64
            && value
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            Ok(Self(value.to_owned()))
        } else {
            Err(Error::InvalidInput(benchgate_core::InvalidInput {
                what: "fingerprint",
                value: value.to_owned(),
                reason: "expected 64 lower-case hex digits (benchgate fingerprint --format json)",
            }))
        }
    }

    /// The full hash.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 digits, for people.
    pub fn short(&self) -> &str {
        &self.0[..12]
    }
}

impl TryFrom<String> for Fingerprint {
    type Error = Error;
    fn try_from(value: String) -> Result<Self> {
        Self::parse(&value)
    }
}

impl From<Fingerprint> for String {
    fn from(value: Fingerprint) -> Self {
        value.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The GitHub-hosted runner image, from the `ImageOS` and `ImageVersion` variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunnerImage {
    /// `ImageOS`, e.g. `ubuntu24`.
    pub os: Option<String>,
    /// `ImageVersion`, e.g. `20241124.1.0`.
    pub version: Option<String>,
}

/// What `rustc -vV` says about the compiler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustcInfo {
    /// The first line, e.g. `rustc 1.95.0 (59807616e 2026-04-14)`.
    pub version: String,
    /// The `host:` line, e.g. `x86_64-unknown-linux-gnu`.
    pub host_triple: String,
}

impl RustcInfo {
    /// Runs `<rustc> -vV` and parses its answer.
    pub fn query(rustc: &str) -> Result<Self> {
        let output = Command::new(rustc).arg("-vV").output().map_err(|e| {
            Error::Fingerprint(format!("cannot run `{rustc} -vV`: {e}; is Rust installed?"))
        })?;
        if !output.status.success() {
            return Err(Error::Fingerprint(format!(
                "`{rustc} -vV` failed with {}",
                output.status
            )));
        }
        Self::parse(&String::from_utf8_lossy(&output.stdout))
    }

    /// Parses the text of `rustc -vV`.
    pub fn parse(text: &str) -> Result<Self> {
        let version = text
            .lines()
            .next()
            .filter(|line| line.starts_with("rustc "))
            .ok_or_else(|| {
                Error::Fingerprint("`rustc -vV` printed no `rustc <version>` line".to_owned())
            })?;
        let host_triple = text
            .lines()
            .find_map(|line| line.strip_prefix("host: "))
            .ok_or_else(|| Error::Fingerprint("`rustc -vV` printed no `host:` line".to_owned()))?;
        Ok(Self {
            version: version.trim().to_owned(),
            host_triple: host_triple.trim().to_owned(),
        })
    }
}

/// Everything benchgate records about a machine. The fields above `hostname` are hashed into
/// the [`Fingerprint`]; the rest are recorded for people and never hashed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HardwareProfile {
    /// CPU architecture, e.g. `x86_64`.
    pub cpu_arch: String,
    /// CPU vendor, e.g. `GenuineIntel`.
    pub cpu_vendor: String,
    /// CPU brand string, e.g. `AMD EPYC 7763 64-Core Processor`.
    pub cpu_brand: String,
    /// Physical cores.
    pub physical_cores: u32,
    /// Logical cores (hardware threads).
    pub logical_cores: u32,
    /// Total memory, rounded to the nearest GiB.
    pub memory_gib: u64,
    /// Runtime-detected CPU features, sorted (`avx2`, `avx512f`, `neon`, ...).
    pub cpu_features: Vec<String>,
    /// OS name, e.g. `Ubuntu`.
    pub os_name: String,
    /// OS major version, e.g. `24`.
    pub os_major_version: String,
    /// Runner image (`ImageOS`), when on a hosted runner.
    pub runner_image: Option<String>,
    /// Runner image version (`ImageVersion`), when on a hosted runner.
    pub runner_image_version: Option<String>,
    /// The compiler, e.g. `rustc 1.95.0 (59807616e 2026-04-14)`.
    pub rustc_version: String,
    /// The compiler's host triple.
    pub host_triple: String,
    /// Host name (recorded, not hashed: runners are ephemeral).
    pub hostname: Option<String>,
    /// CPU frequency in MHz (recorded, not hashed: it moves with turbo and VMs).
    pub cpu_frequency_mhz: Option<u64>,
    /// Kernel version (recorded, not hashed).
    pub kernel_version: Option<String>,
    /// Full OS version (recorded, not hashed; the major version is).
    pub os_version: Option<String>,
}

/// Bumped whenever the hashed components or their encoding change.
const FINGERPRINT_SCHEME: &str = "benchgate-fingerprint-v1";

impl HardwareProfile {
    /// Describes this machine. `runner` and `rustc` come from the caller, which owns the
    /// environment and the choice of compiler.
    pub fn detect(runner: &RunnerImage, rustc: &RustcInfo) -> Result<Self> {
        use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

        let system = System::new_with_specifics(
            RefreshKind::nothing()
                .with_cpu(CpuRefreshKind::nothing().with_frequency())
                .with_memory(MemoryRefreshKind::nothing().with_ram()),
        )
        .map_err(|e| Error::Fingerprint(format!("cannot query the system: {e}")))?;
        let cpus = system.cpus();
        let first_cpu = cpus.first();
        let logical_cores = u32::try_from(cpus.len()).unwrap_or(u32::MAX);
        let physical_cores = System::physical_core_count()
            .ok()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(logical_cores);
        let os_version = System::os_version().ok();
        const GIB: f64 = (1u64 << 30) as f64;
        Ok(Self {
            cpu_arch: System::cpu_arch(),
            cpu_vendor: first_cpu
                .map(|c| c.vendor_id().trim().to_owned())
                .unwrap_or_default(),
            cpu_brand: first_cpu
                .map(|c| c.brand().trim().to_owned())
                .unwrap_or_default(),
            physical_cores,
            logical_cores,
            memory_gib: (system.total_memory() as f64 / GIB).round() as u64,
            cpu_features: detect_cpu_features(),
            os_name: System::name().unwrap_or_else(|_| std::env::consts::OS.to_owned()),
            os_major_version: os_version.as_deref().map(major_version).unwrap_or_default(),
            runner_image: runner.os.clone(),
            runner_image_version: runner.version.clone(),
            rustc_version: rustc.version.clone(),
            host_triple: rustc.host_triple.clone(),
            hostname: System::host_name().ok(),
            cpu_frequency_mhz: first_cpu.map(|c| c.frequency()).filter(|&mhz| mhz > 0),
            kernel_version: System::kernel_version().ok(),
            os_version,
        })
    }

    /// The hashed components, in hashing order, as `(name, value)` pairs.
    pub fn hashed_components(&self) -> Vec<(&'static str, String)> {
        vec![
            ("cpu_arch", self.cpu_arch.clone()),
            ("cpu_vendor", self.cpu_vendor.clone()),
            ("cpu_brand", self.cpu_brand.clone()),
            ("physical_cores", self.physical_cores.to_string()),
            ("logical_cores", self.logical_cores.to_string()),
            ("memory_gib", self.memory_gib.to_string()),
            ("cpu_features", self.cpu_features.join(",")),
            ("os_name", self.os_name.clone()),
            ("os_major_version", self.os_major_version.clone()),
            (
                "runner_image",
                self.runner_image.clone().unwrap_or_default(),
            ),
            (
                "runner_image_version",
                self.runner_image_version.clone().unwrap_or_default(),
            ),
            ("rustc_version", self.rustc_version.clone()),
            ("host_triple", self.host_triple.clone()),
        ]
    }

    /// The stable hash of the hashed components.
    pub fn fingerprint(&self) -> Fingerprint {
        let mut hasher = Sha256::new();
        hasher.update(FINGERPRINT_SCHEME.as_bytes());
        for (name, value) in self.hashed_components() {
            // Length-prefixed so no two different profiles encode to the same bytes.
            hasher.update(format!("\n{name}={}:", value.len()).as_bytes());
            hasher.update(value.as_bytes());
        }
        Fingerprint(to_hex(&hasher.finalize()))
    }

    /// The hashed components in which `self` and `other` differ: why two runs are not comparable.
    pub fn differences(&self, other: &HardwareProfile) -> Vec<(&'static str, String, String)> {
        self.hashed_components()
            .into_iter()
            .zip(other.hashed_components())
            .filter(|((_, mine), (_, theirs))| mine != theirs)
            .map(|((name, mine), (_, theirs))| (name, mine, theirs))
            .collect()
    }
}

/// `"22.04"` → `"22"`, `"12"` → `"12"`, `"15.1.1"` → `"15"`.
fn major_version(version: &str) -> String {
    version
        .split(['.', ' '])
        .next()
        .unwrap_or_default()
        .to_owned()
}

pub use benchgate_core::to_hex;

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn detect_cpu_features() -> Vec<String> {
    let mut features = Vec::new();
    macro_rules! detect {
        ($($name:tt),* $(,)?) => {
            $(if std::arch::is_x86_feature_detected!($name) { features.push($name.to_owned()); })*
        };
    }
    detect!(
        "sse2",
        "sse3",
        "ssse3",
        "sse4.1",
        "sse4.2",
        "popcnt",
        "avx",
        "avx2",
        "fma",
        "bmi1",
        "bmi2",
        "lzcnt",
        "avx512f",
        "avx512bw",
        "avx512cd",
        "avx512dq",
        "avx512vl",
        "aes",
        "pclmulqdq",
        "sha",
        "adx",
    );
    features.sort();
    features
}

#[cfg(target_arch = "aarch64")]
fn detect_cpu_features() -> Vec<String> {
    let mut features = Vec::new();
    macro_rules! detect {
        ($($name:tt),* $(,)?) => {
            $(if std::arch::is_aarch64_feature_detected!($name) { features.push($name.to_owned()); })*
        };
    }
    detect!(
        "neon", "aes", "sha2", "sha3", "crc", "lse", "dotprod", "sve", "sve2"
    );
    features.sort();
    features
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64")))]
fn detect_cpu_features() -> Vec<String> {
    Vec::new()
}
