// swift-tools-version:6.0
import PackageDescription

// One dependency only: argument parsing. Everything on the per-tick path is the C library and
// system calls, so no dependency there would earn its build minutes on a 2-core CI machine.
let package = Package(
    name: "perfhud",
    platforms: [.macOS(.v13)],  // Linux only in practice; Duration needs macOS 13 when type-checked there
    products: [
        .executable(name: "perfhud", targets: ["perfhud"]),
        .executable(name: "perfhud-demo", targets: ["perfhud-demo"]),
        .library(name: "PerfHUDCore", targets: ["PerfHUDCore"]),
        // The client library programs link to report frames, actions and phases: no dependency.
        .library(name: "PerfHUDClient", targets: ["PerfHUDClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // libproc2 (procps-ng): discovery and metadata. Debian package libproc2-dev.
        .systemLibrary(
            name: "CProc2",
            pkgConfig: "libproc2",
            providers: [.apt(["libproc2-dev"])]
        ),
        // Static inline wrappers for what Swift cannot import: variadic ioctl/syscall.
        .target(name: "CSystemShims"),
        .target(
            name: "PerfHUDCore",
            dependencies: ["CProc2", "CSystemShims"]
        ),
        .executableTarget(
            name: "perfhud",
            dependencies: [
                "PerfHUDCore",
                "PerfHUDClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(name: "PerfHUDClient"),
        .executableTarget(name: "perfhud-demo", dependencies: ["PerfHUDClient"]),
        .testTarget(name: "PerfHUDCoreTests", dependencies: ["PerfHUDCore", "PerfHUDClient"]),
    ],
    swiftLanguageModes: [.v5]
)
