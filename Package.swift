// swift-tools-version:6.0
import PackageDescription

// One dependency only: argument parsing. Everything on the per-tick path is the C library and
// system calls, so no dependency there would earn its build minutes on a 2-core CI machine.
let package = Package(
    name: "perfhud",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "perfhud", targets: ["perfhud"]),
        .executable(name: "perfhud-demo", targets: ["perfhud-demo"]),
        .library(name: "PerfHUDCore", targets: ["PerfHUDCore"]),
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
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "perfhud-demo"),
        .testTarget(name: "PerfHUDCoreTests", dependencies: ["PerfHUDCore"]),
    ],
    swiftLanguageModes: [.v5]
)
